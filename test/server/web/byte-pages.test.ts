// Pages of stored bytes by byte offset: line starts, long lines cut at a character's edge, line numbers.

import { describe, expect, it } from "vitest";
import type { StoredBytes } from "../../../src/server/store.js";
import { lineNumberAt, looksLikeText, readPage } from "../../../src/server/web/byte-pages.js";

/** Bytes served in small chunks, counting how many were read. */
function stored(text: string | Buffer, chunk = 3): StoredBytes & { read: number } {
  const bytes = Buffer.from(text);
  const result = {
    size: bytes.length,
    read: 0,
    async *chunks(from = 0) {
      for (let at = from; at < bytes.length; at += chunk) {
        result.read += Math.min(chunk, bytes.length - at);
        yield bytes.subarray(at, at + chunk);
      }
    },
  };
  return result;
}

describe("readPage", () => {
  it("ends a page after its last whole line and starts the next exactly there", async () => {
    const s = stored("one\ntwo\nthree\n");
    const first = await readPage(s, 0, 9, true);
    expect([first.bytes.toString(), first.next]).toEqual(["one\ntwo\n", 8]);
    const second = await readPage(s, first.next!, 9, false);
    expect([second.bytes.toString(), second.next]).toEqual(["three\n", undefined]);
  });

  it("moves an offset a person picked to the next line start, reading only near it", async () => {
    const s = stored(`${"x".repeat(1000)}\nlast line\n`);
    const page = await readPage(s, 995, 100, true);
    expect(page.bytes.toString()).toBe("last line\n");
    expect(page.start).toBe(1001);
    expect(s.read).toBeLessThan(120);
  });

  it("cuts a line longer than a page at a character's edge, never inside it", async () => {
    const s = stored("ab€€€€\n");
    const page = await readPage(s, 0, 4, true);
    expect(page.bytes.toString()).toBe("ab");
    const rest = await readPage(s, page.next!, 4, false);
    expect(rest.bytes.toString()).toBe("€");
  });
});

describe("lineNumberAt and looksLikeText", () => {
  it("counts the lines before an offset", async () => {
    expect(await lineNumberAt(stored("a\nb\nc\n"), 4)).toBe(3);
    expect(await lineNumberAt(stored("a\nb\nc\n"), 0)).toBe(1);
  });

  it("takes NUL or broken UTF-8 for binary, a character cut at the end for text", () => {
    expect(looksLikeText(Buffer.from("plain € text"))).toBe(true);
    expect(looksLikeText(Buffer.from("cut €").subarray(0, 6))).toBe(true);
    expect(looksLikeText(Buffer.from([0x61, 0, 0x62]))).toBe(false);
    expect(looksLikeText(Buffer.from([0xff, 0xfe, 0x41]))).toBe(false);
  });
});
