import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../src/stream/lines.js";
import { pushInPlace } from "../kit/in-place.js";

function split(chunks: (string | Buffer)[], maxLineLength?: number) {
  const lines: string[] = [];
  const overflows: number[] = [];
  const splitter = new LineSplitter((line) => lines.push(line.toString("latin1")), {
    maxLineLength,
    onOverflow: (length) => overflows.push(length),
  });
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk);
  splitter.end();
  return { lines, overflows };
}

describe("LineSplitter", () => {
  it("should split lines within one chunk", () => {
    expect(split(["a\nbb\nccc\n"]).lines).toEqual(["a", "bb", "ccc"]);
  });

  it("should join a line that spans several chunks", () => {
    expect(split(["ab", "cd", "e\nf", "g\n"]).lines).toEqual(["abcde", "fg"]);
  });

  it("should keep copies of a line's first pieces: a chunk's buffer may be read into again", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line.toString()));
    pushInPlace(Buffer.from("ab\ncdefgh\nij"), [4], (chunk) => splitter.push(chunk));
    splitter.end();
    expect(lines).toEqual(["ab", "cdefgh", "ij"]);
  });

  it("should emit a last line that has no newline", () => {
    expect(split(["a\nlast"]).lines).toEqual(["a", "last"]);
  });

  it("should emit nothing for empty input", () => {
    expect(split([]).lines).toEqual([]);
    expect(split([Buffer.alloc(0)]).lines).toEqual([]);
  });

  it("should keep empty lines", () => {
    expect(split(["\n\na\n\n"]).lines).toEqual(["", "", "a", ""]);
  });

  it("should leave the carriage return of a CRLF line to the parser", () => {
    expect(split(["a\r\nb\r", "\n"]).lines).toEqual(["a\r", "b\r"]);
  });

  it("should keep a multi-byte character split across chunks intact", () => {
    const bytes = Buffer.from('{"p":"ünïcode ✓"}\n');
    const lines: Buffer[] = [];
    const splitter = new LineSplitter((line) => lines.push(Buffer.from(line)));
    for (let i = 0; i < bytes.length; i++) splitter.push(bytes.subarray(i, i + 1));
    splitter.end();
    expect(lines.map((line) => line.toString("utf8"))).toEqual(['{"p":"ünïcode ✓"}']);
  });

  it("should hand on lines without copying when they fit in one chunk", () => {
    const chunk = Buffer.from("abc\ndef\n");
    const seen: Buffer[] = [];
    const splitter = new LineSplitter((line) => seen.push(line));
    splitter.push(chunk);
    expect(seen[0]!.buffer).toBe(chunk.buffer);
  });

  it("should hand a sink with lineIn each line within a chunk as its place in that chunk", () => {
    const seen: [Buffer, number, number][] = [];
    const joined: string[] = [];
    const splitter = new LineSplitter({
      lineIn: (chunk, start, end) => seen.push([chunk, start, end]),
      line: (line) => joined.push(line.toString()),
    });
    const first = Buffer.from("ab\ncd\nsp");
    splitter.push(first);
    splitter.push(Buffer.from("lit\n\n"));
    splitter.end();
    expect(seen.slice(0, 2)).toEqual([
      [first, 0, 2],
      [first, 3, 5],
    ]);
    expect(seen[0]![0]).toBe(first);
    // A line from two chunks is joined and comes whole; the empty line after it is a place again.
    expect(joined).toEqual(["split"]);
    expect(seen.slice(2).map(([chunk, start, end]) => [chunk.subarray(start, end).toString(), end - start])).toEqual([["", 0]]);
  });

  it("should skip a line longer than the maximum and say so once per line", () => {
    const { lines, overflows } = split(["ok\n", "0123456789", "0123456789\nafter\n"], 15);
    expect(lines).toEqual(["ok", "after"]);
    expect(overflows).toHaveLength(1);
  });

  it("should skip an over-long line that arrives in one chunk", () => {
    const { lines, overflows } = split(["short\n" + "x".repeat(20) + "\nnext"], 10);
    expect(lines).toEqual(["short", "next"]);
    expect(overflows).toEqual([20]);
  });

  it("should skip an over-long last line without newline", () => {
    const { lines, overflows } = split(["a\n", "x".repeat(30)], 10);
    expect(lines).toEqual(["a"]);
    expect(overflows).toHaveLength(1);
  });

  it("should accept a line of exactly the maximum length", () => {
    expect(split(["12345", "67890\n"], 10).lines).toEqual(["1234567890"]);
  });

  it("should pass NUL bytes and invalid UTF-8 through as bytes", () => {
    const lines: Buffer[] = [];
    const splitter = new LineSplitter((line) => lines.push(Buffer.from(line)));
    splitter.push(Buffer.from([0x00, 0xff, 0xfe, 0x0a, 0xc3]));
    splitter.push(Buffer.from([0x28, 0x0a]));
    splitter.end();
    expect(lines).toEqual([Buffer.from([0x00, 0xff, 0xfe]), Buffer.from([0xc3, 0x28])]);
  });
});
