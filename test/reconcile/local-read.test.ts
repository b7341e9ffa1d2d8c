import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readLocal } from "../../src/reconcile/local-read.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tempRoot(): string {
  dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-files-")));
  return dir;
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("readLocal", () => {
  // Kept: read into one buffer sized by the file. Not kept: in chunks of 1 MiB. Empty, one chunk, several.
  it.each([
    ["empty", 0],
    ["small", 1000],
    ["of exactly one chunk", 1024 * 1024],
    ["one byte past it", 1024 * 1024 + 1],
    ["of several chunks", 2.5 * 1024 * 1024],
  ])("should hash and keep a file %s (%d bytes) whole", async (_, size) => {
    const root = tempRoot();
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 10)) & 0xff;
    writeFileSync(path.join(root, "f"), bytes);
    const read = await readLocal(path.join(root, "f"), { root, maxFileSize: 10 * 1024 * 1024, keepBytesUpTo: 10 * 1024 * 1024 });
    expect(read).toMatchObject({ kind: "file", size, sha256: sha256(bytes) });
    expect(read.kind === "file" && read.bytes?.equals(bytes)).toBe(true);
    // Not kept (over the limit to keep): hashed through a reused buffer of at most 1 MiB.
    const hashed = await readLocal(path.join(root, "f"), { root, maxFileSize: 10 * 1024 * 1024, keepBytesUpTo: size - 1 });
    expect(hashed).toMatchObject({ kind: "file", size, sha256: sha256(bytes) });
    expect(hashed.kind === "file" && hashed.bytes).toBeUndefined();
  });

  it("should refuse a symlink and a FIFO without reading or waiting on them", async () => {
    const root = tempRoot();
    writeFileSync(path.join(root, "target"), "x");
    symlinkSync(path.join(root, "target"), path.join(root, "link"));
    execFileSync("mkfifo", [path.join(root, "fifo")]);
    expect(await readLocal(path.join(root, "link"), { root, maxFileSize: 1024 })).toMatchObject({ kind: "refused" });
    // No writer ever comes: a blocking open would hang the whole process here.
    expect(await readLocal(path.join(root, "fifo"), { root, maxFileSize: 1024 })).toEqual({
      kind: "refused",
      reason: "not a regular file",
    });
  });

  it("should say too-large from the size before reading", async () => {
    const root = tempRoot();
    writeFileSync(path.join(root, "big"), Buffer.alloc(2048));
    expect(await readLocal(path.join(root, "big"), { root, maxFileSize: 1024 })).toEqual({ kind: "too-large", size: 2048 });
  });

  it("should read a file whose name ends in ' (deleted)', which the kernel also uses to mark an unlinked descriptor (defect 12)", async () => {
    const file = path.join(tempRoot(), "notes (deleted)");
    writeFileSync(file, "still here");
    const read = await readLocal(file, { root: dir!, maxFileSize: 1024 });
    expect(read).toMatchObject({ kind: "file", size: 10 });
  });
});
