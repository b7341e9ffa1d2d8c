import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobSpool } from "../../src/server/blob-spool.js";

let tmp: string;
let before: string | undefined;
beforeEach(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "uspark-spool-test-"));
  before = process.env.TMPDIR;
  process.env.TMPDIR = tmp; // os.tmpdir() reads it at each call
});
afterEach(() => {
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
  rmSync(tmp, { recursive: true, force: true });
});

/** Everything `feed` hands on for a part, and the size of each piece. */
async function fed(spool: BlobSpool, part: { offset: number; size: number }) {
  const pieces: Buffer[] = [];
  await spool.feed(part, (chunk) => {
    pieces.push(chunk);
  });
  return { bytes: Buffer.concat(pieces), sizes: pieces.map((piece) => piece.length) };
}

describe("BlobSpool", () => {
  it("has no name in the temp directory while it is open: a killed server leaves no file", async () => {
    const spool = await BlobSpool.open();
    await spool.append(Buffer.from("bytes"));
    expect(readdirSync(tmp)).toEqual([]);
    await spool.close();
  });

  it("feeds each part back where it lies, in fresh pieces of at most 1 MiB", async () => {
    const spool = await BlobSpool.open();
    const first = Buffer.from("first part");
    const second = Buffer.alloc(2.5 * 1024 * 1024, 7);
    await spool.append(first);
    const at = spool.end;
    await spool.append(second);
    expect((await fed(spool, { offset: 0, size: first.length })).bytes).toEqual(first);
    const back = await fed(spool, { offset: at, size: second.length });
    expect(back.bytes.equals(second)).toBe(true);
    expect(back.sizes).toEqual([1024 * 1024, 1024 * 1024, 0.5 * 1024 * 1024]);
    expect((await fed(spool, { offset: at, size: 0 })).sizes).toEqual([]);
    await spool.close();
  });
});
