import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ARRAY, JsonScanner, LITERAL, NUMBER, OBJECT, type ScanHandler, STRING } from "../../src/agents/json-scanner.js";
import { SkippedString } from "../../src/agents/sparse-json.js";
import { JSON_SAMPLES } from "../kit/agent-fixtures.js";

/** A handler that wants everything and builds the value back, as JSON.parse would. */
class Builder implements ScanHandler {
  stack: Array<{ container: unknown[] | Record<string, unknown>; key: string | number | null }> = [];
  result: unknown;
  private key: string | number | null = null;
  kinds: number[] = [];

  begin(depth: number, key: string | number | null, kind: number): boolean {
    this.kinds.push(kind);
    this.key = key;
    if (kind === OBJECT || kind === ARRAY) {
      const container = kind === OBJECT ? {} : [];
      this.put(depth, container);
      this.stack.push({ container, key });
    }
    return true;
  }

  scalar(value: unknown): void {
    this.put(this.stack.length, value);
  }

  end(): void {
    this.stack.pop();
  }

  private put(depth: number, value: unknown): void {
    if (depth === 0) this.result = value;
    else {
      const parent = this.stack[this.stack.length - 1]!.container;
      if (Array.isArray(parent)) parent.push(value);
      else Object.defineProperty(parent, this.key as string, { value, enumerable: true, writable: true, configurable: true });
    }
  }
}

/** Scans `text` in pieces cut at `cuts` (byte offsets); the built value, or "invalid". */
function scan(text: string | Buffer, cuts: number[] = [], maxStringBytes?: number, keys?: string[]): unknown {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  const builder = new Builder();
  const scanner = new JsonScanner(builder, maxStringBytes, keys);
  let from = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b).concat(bytes.length)) {
    // Each piece is a copy that is wiped after the call: the scanner must keep nothing of it.
    const piece = Buffer.from(bytes.subarray(from, cut));
    expect(scanner.write(piece)).toBe(-1);
    piece.fill(0x20);
    from = cut;
  }
  return scanner.end() ? builder.result : "invalid";
}

const everyCut = (text: string) => Array.from({ length: Buffer.byteLength(text) }, (_, i) => i);

describe("JsonScanner", () => {
  it("reads what JSON.parse reads, in one piece or cut anywhere", () => {
    for (const text of JSON_SAMPLES) {
      expect(scan(text)).toEqual(JSON.parse(text));
      for (const cut of everyCut(text)) expect(scan(text, [cut])).toEqual(JSON.parse(text));
      expect(scan(text, everyCut(text))).toEqual(JSON.parse(text)); // a byte at a time
    }
  });

  it("reads any JSON value, however it is cut (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), fc.array(fc.nat({ max: 400 }), { maxLength: 12 }), (value, pretty, cuts) => {
        const text = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
        expect(scan(text, cuts, Infinity)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("finds nothing valid in invalid JSON, in one piece or cut anywhere", () => {
    const samples = [
      "",
      "{",
      '{"a":}',
      '{"a":1,}',
      "garbage",
      '{"a":1} trailing',
      "[1 2]",
      '{"a" 1}',
      "nul",
      "1e999",
      '{"a":"unterminated',
      '{"a":"\\x"}',
      "[1]]",
      '{"a":1]',
      "}",
      '{"a":tru}',
      '{"a":1}{',
    ];
    for (const text of samples) {
      expect(scan(text)).toBe("invalid");
      for (const cut of everyCut(text)) expect(scan(text, [cut])).toBe("invalid");
    }
  });

  it("survives absurd nesting", () => {
    expect(scan("[".repeat(200_000))).toBe("invalid");
  });

  it("stands in for long strings with their size, wherever they are cut", () => {
    const text = `{"name":"Write","content":"${'x\\"'.repeat(50)}"}`; // x\" fifty times: 150 bytes
    for (const cut of [0, 20, 30, 31, 32, 100, 140]) {
      const value = scan(text, [cut], 10) as Record<string, unknown>;
      expect(value.name).toBe("Write");
      expect(value.content).toBeInstanceOf(SkippedString);
      expect((value.content as SkippedString).byteLength).toBe(150);
    }
  });

  it("announces each value's kind, and passes silently over what the handler does not want", () => {
    const seen: Array<[number, string | number | null, number]> = [];
    const scalars: unknown[] = [];
    const handler: ScanHandler = {
      begin: (depth, key, kind) => {
        seen.push([depth, key, kind]);
        return key !== "skip";
      },
      scalar: (value) => scalars.push(value),
      end: () => {},
    };
    const scanner = new JsonScanner(handler);
    expect(scanner.write(Buffer.from('{"a":[1,"s",true],"skip":{"deep":[1,{"x":"y"}]},"n":null}'))).toBe(-1);
    expect(scanner.end()).toBe(true);
    expect(seen).toEqual([
      [0, "", OBJECT],
      [1, "a", ARRAY],
      [2, 0, NUMBER],
      [2, 1, STRING],
      [2, 2, LITERAL],
      [1, "skip", OBJECT],
      [1, "n", LITERAL],
    ]);
    expect(scalars).toEqual([1, "s", true, null]);
  });

  it("tells apart only the keys it was given, escaped or not", () => {
    const keys: Array<string | number | null> = [];
    const handler: ScanHandler = { begin: (depth, key) => (keys.push(key), depth === 0), scalar: () => {}, end: () => {} };
    const scanner = new JsonScanner(handler, undefined, ["type", "id"]);
    scanner.write(Buffer.from('{"type":1,"typ\\u0065":2,"other":3,"id":4,"i":5,"idx":6}'));
    expect(scanner.end()).toBe(true);
    expect(keys).toEqual(["", "type", "type", null, "id", null, null]);
  });

  it("stops where the handler asks, and reads on from there", () => {
    const text = Buffer.from('{"a":"first","b":"second","c":[1,2]}');
    let stopAtB = true;
    const builder = new Builder();
    const scanner = new JsonScanner({
      begin: (depth, key, kind) => {
        if (key === "b" && stopAtB) scanner.stop();
        return builder.begin(depth, key, kind);
      },
      scalar: (value) => builder.scalar(value),
      end: () => builder.end(),
    });
    const at = scanner.write(text);
    expect(text.toString("latin1", at - 1)).toBe('"second","c":[1,2]}'); // just past the value's first byte
    stopAtB = false;
    expect(scanner.write(text, at)).toBe(-1);
    expect(scanner.end()).toBe(true);
    expect(builder.result).toEqual({ a: "first", b: "second", c: [1, 2] });
  });

  it("starts afresh after reset", () => {
    const builder = new Builder();
    const scanner = new JsonScanner(builder);
    scanner.write(Buffer.from('{"a":"unfinished'));
    scanner.reset();
    scanner.write(Buffer.from('{"b":2}'));
    expect(scanner.end()).toBe(true);
    expect(builder.result).toEqual({ b: 2 });
  });
});
