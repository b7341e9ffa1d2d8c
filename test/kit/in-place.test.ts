import { describe, expect, it } from "vitest";
import { pushInPlace } from "./in-place.js";

describe("pushInPlace", () => {
  it("hands every byte in order, in pieces of the sizes given, all views of one buffer", () => {
    const seen: string[] = [];
    const buffers = new Set<ArrayBufferLike>();
    pushInPlace(Buffer.from("abcdefg"), [3, 1], (chunk) => {
      seen.push(chunk.toString());
      buffers.add(chunk.buffer);
    });
    expect(seen).toEqual(["abc", "d", "efg"]);
    expect(buffers.size).toBe(1);
  });

  it("overwrites a chunk once push returns: a view kept is garbage", () => {
    const kept: Buffer[] = [];
    pushInPlace(Buffer.from("abcdef"), [3], (chunk) => kept.push(chunk));
    expect(kept.map((chunk) => [...chunk])).toEqual([
      [0xee, 0xee, 0xee],
      [0xee, 0xee, 0xee],
    ]);
  });
});
