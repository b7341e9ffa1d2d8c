import { describe, expect, it } from "vitest";
import { parseEvent, parseSparse, SkippedString } from "../../src/agents/sparse-json.js";

const parse = (text: string, max?: number) => parseSparse(Buffer.from(text), max);

describe("parseSparse", () => {
  it("should read what JSON.parse reads", () => {
    const samples = [
      '{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":-1.5e3}',
      '  [ 1 , "two" , { } , [ ] ]  ',
      '"caf\\u00e9 \\"quoted\\" \\\\ back"',
      '{"k":"ünïcode ✓","n":0}',
      '{"a":"x\\\\"}',
    ];
    for (const text of samples) expect(parse(text)).toEqual(JSON.parse(text));
  });

  it("should stand in for long strings with their size", () => {
    const value = parse(`{"name":"Write","content":"${"x".repeat(100)}"}`, 10) as Record<string, unknown>;
    expect(value.name).toBe("Write");
    expect(value.content).toBeInstanceOf(SkippedString);
    expect((value.content as SkippedString).byteLength).toBe(100);
  });

  it("should find the end of a long string full of escaped quotes", () => {
    const content = JSON.stringify('say "hi" \\ and "bye" \\'.repeat(50));
    const value = parse(`{"content":${content},"file_path":"/p/a.ts"}`, 10) as Record<string, unknown>;
    expect(value.file_path).toBe("/p/a.ts");
  });

  it("should answer undefined for invalid JSON instead of throwing", () => {
    for (const text of ["", "{", '{"a":}', '{"a":1,}', "garbage", '{"a":1} trailing', "[1 2]", '{"a" 1}', "nul", "1e999", '{"a":"unterminated']) {
      expect(parse(text)).toBeUndefined();
    }
  });

  it("should survive absurd nesting", () => {
    expect(parse("[".repeat(200_000))).toBeUndefined();
  });

  it("should keep a __proto__ key as a plain key", () => {
    const value = parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(value, "__proto__")?.value).toEqual({ polluted: true });
  });

  it("should accept a trailing carriage return", () => {
    expect(parse('{"a":1}\r')).toEqual({ a: 1 });
  });

  it("should give events only for JSON objects", () => {
    expect(parseEvent(Buffer.from('{"type":"x"}'))).toEqual({ type: "x" });
    expect(parseEvent(Buffer.from("[1]"))).toBeUndefined();
    expect(parseEvent(Buffer.from('"s"'))).toBeUndefined();
    expect(parseEvent(Buffer.from("null"))).toBeUndefined();
  });
});
