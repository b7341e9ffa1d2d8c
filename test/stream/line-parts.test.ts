import { describe, expect, it } from "vitest";
import { type LineSink, LineSplitter } from "../../src/stream/lines.js";

/** A sink that takes long lines in pieces, and writes down how each line came. */
function recorder() {
  const events: string[] = [];
  let current = "";
  const sink: Required<Omit<LineSink, "lineIn">> = {
    line: (line) => events.push(`line ${line.toString("latin1")}`),
    linePart: (part, last) => {
      current += part.toString("latin1");
      events.push(`part ${part.toString("latin1")}${last ? " (last)" : ""}`);
      if (last) {
        events.push(`= ${current}`);
        current = "";
      }
    },
    lineDropped: () => {
      events.push("dropped");
      current = "";
    },
  };
  return { sink, events };
}

function push(splitter: LineSplitter, chunks: string[]): void {
  for (const chunk of chunks) splitter.push(Buffer.from(chunk, "latin1"));
  splitter.end();
}

describe("LineSplitter with a sink that takes pieces", () => {
  it("hands whole lines to line() and a line that spans chunks piece by piece", () => {
    const { sink, events } = recorder();
    push(new LineSplitter(sink), ["a\nbb", "cc", "c\nd\n"]);
    expect(events).toEqual(["line a", "part bb", "part cc", "part c (last)", "= bbccc", "line d"]);
  });

  it("ends a line whose newline starts the next chunk with an empty last piece", () => {
    const { sink, events } = recorder();
    push(new LineSplitter(sink), ["ab", "\ncd\n"]);
    expect(events).toEqual(["part ab", "part  (last)", "= ab", "line cd"]);
  });

  it("finishes a last line without newline at the end of input", () => {
    const { sink, events } = recorder();
    push(new LineSplitter(sink), ["x\nab", "cd"]);
    expect(events).toEqual(["line x", "part ab", "part cd", "part  (last)", "= abcd"]);
  });

  it("holds nothing: each piece is a view of its chunk", () => {
    const chunks = [Buffer.from("abc"), Buffer.from("def\n")];
    const seen: Buffer[] = [];
    const splitter = new LineSplitter({ line: () => {}, linePart: (part) => seen.push(part) });
    for (const chunk of chunks) splitter.push(chunk);
    expect(seen[0]!.buffer).toBe(chunks[0]!.buffer);
    expect(seen[1]!.buffer).toBe(chunks[1]!.buffer);
  });

  it("tells the sink when a line it was getting grew too long, and goes on with the next", () => {
    const { sink, events } = recorder();
    const overflows: number[] = [];
    push(new LineSplitter(sink, { maxLineLength: 5, onOverflow: (n) => overflows.push(n) }), ["ab", "cd", "ef", "gh\nok\n"]);
    expect(events).toEqual(["part ab", "part cd", "dropped", "line ok"]);
    expect(overflows).toEqual([6]);
  });

  it("does not start a line that is too long in its first chunk", () => {
    const { sink, events } = recorder();
    push(new LineSplitter(sink, { maxLineLength: 3 }), ["abcdef", "gh\nok\n"]);
    expect(events).toEqual(["line ok"]);
  });

  it("joins the pieces for a sink without linePart, as for a function", () => {
    const lines: string[] = [];
    push(new LineSplitter({ line: (line) => lines.push(line.toString("latin1")) }), ["a", "b", "c\nd"]);
    expect(lines).toEqual(["abc", "d"]);
  });
});
