import { describe, expect, it } from "vitest";
import { SameBytes } from "./same-bytes.js";

const written = (expected: string[], chunks: string[]) => {
  const same = new SameBytes(expected.map((piece) => Buffer.from(piece)));
  for (const chunk of chunks) same.write(Buffer.from(chunk));
  return same.verdict();
};

describe("SameBytes (a stream compared with the pieces it should carry, holding no copy)", () => {
  it.each([
    ["chunks cut where the pieces are", ["ab", "cd"], ["ab", "cd"]],
    ["chunks across piece boundaries", ["ab", "cd", "ef"], ["a", "bcde", "f"]],
    ["one chunk for all, empty pieces and chunks", ["ab", "", "c"], ["", "abc"]],
  ])("should find the same bytes in %s", (_how, expected, chunks) => {
    expect(written(expected, chunks)).toEqual({ bytes: expected.join("").length, differsAt: null });
  });

  it.each([
    ["a byte changed", ["ab", "cd"], ["ab", "cx"], 2],
    ["a byte changed in a chunk across pieces", ["ab", "cd"], ["a", "bx", "d"], 1],
    ["bytes past the end", ["ab"], ["ab", "c"], 2],
    ["a piece left out", ["ab", "cd", "ef"], ["ab", "ef"], 2],
  ])("should say where it differs with %s", (_how, expected, chunks, at) => {
    expect(written(expected, chunks).differsAt).toBe(at);
  });

  it("should count a stream that stops short as different in length only", () => {
    const same = new SameBytes([Buffer.from("abcd")]);
    same.write(Buffer.from("ab"));
    expect(same.verdict()).toEqual({ bytes: 2, differsAt: null });
    expect(same.expectedBytes).toBe(4);
  });
});
