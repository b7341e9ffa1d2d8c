import { describe, expect, it } from "vitest";
import {
  isObject,
  parseEmbeddedObject,
  parseEvent,
  parseObjectPrefix,
  parseSparse,
  SkippedString,
  unescapeJsonString,
} from "../../src/agents/sparse-json.js";
import { JSON_SAMPLES } from "../kit/agent-fixtures.js";

const parse = (text: string, max?: number) => parseSparse(Buffer.from(text), max);

describe("parseSparse", () => {
  it("should read what JSON.parse reads", () => {
    for (const text of JSON_SAMPLES) expect(parse(text)).toEqual(JSON.parse(text));
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
    for (const text of [
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
    ]) {
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

describe("parseSparse, further", () => {
  it("reads keys of any length", () => {
    const key = "k".repeat(100);
    expect(parse(`{"${key}":1}`, 10)).toEqual({ [key]: 1 });
  });

  it("keeps the raw text of a skipped string", () => {
    const value = parse('{"c":"a\\"b\\\\c d e f g h"}', 4) as Record<string, SkippedString>;
    expect(value.c!.raw?.toString()).toBe('a\\"b\\\\c d e f g h');
  });

  it("reads a line of many short strings with escapes in linear time", () => {
    const many = { a: Array.from({ length: 200_000 }, (_, i) => `s${i}`), z: "back\\slash" };
    const text = JSON.stringify(many);
    const started = performance.now();
    expect(parse(text)).toEqual(many);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("does not count a SkippedString as an object", () => {
    expect(isObject(new SkippedString(3))).toBe(false);
    expect(isObject({})).toBe(true);
  });
});

describe("unescapeJsonString", () => {
  it("decodes what JSON.parse decodes", () => {
    const samples = ["plain", 'q\\"b\\\\s\\/', "\\b\\f\\n\\r\\t", "\\u00e9\\u2713", "\\ud83d\\ude00", "lone \\ud83d end", "ünïcode ✓"];
    for (const raw of samples) {
      const decoded = unescapeJsonString(Buffer.from(raw), Infinity);
      expect(decoded?.complete).toBe(true);
      expect(decoded?.bytes.toString()).toBe(Buffer.from(JSON.parse(`"${raw}"`) as string).toString());
    }
  });

  it("stops after the limit and says so", () => {
    const decoded = unescapeJsonString(Buffer.from("abc\\ndef"), 4);
    expect(decoded).toEqual({ bytes: Buffer.from("abc\n"), complete: false });
  });

  it("refuses an invalid escape", () => {
    expect(unescapeJsonString(Buffer.from("a\\x"), Infinity)).toBeUndefined();
    expect(unescapeJsonString(Buffer.from("a\\u12"), Infinity)).toBeUndefined();
  });
});

describe("parseObjectPrefix and parseEmbeddedObject", () => {
  it("keeps only the members complete before the cut", () => {
    expect(parseObjectPrefix(Buffer.from('{"a":"x","b":12'))).toEqual({ a: "x" });
    expect(parseObjectPrefix(Buffer.from('{"a":"x","b":"unterminat'))).toEqual({ a: "x" });
    expect(parseObjectPrefix(Buffer.from('{"a":{"n":1},"b":[1,2]}'))).toEqual({ a: { n: 1 }, b: [1, 2] });
  });

  it("reads an object sent as a JSON string, long or short", () => {
    const small = JSON.stringify({ path: "a.ts" });
    expect(parseEmbeddedObject(small, ["path"])).toEqual({ path: "a.ts" });
    const long = JSON.stringify({ path: "a.ts", content: "x".repeat(100_000) });
    const event = parseEvent(Buffer.from(JSON.stringify({ arguments: long })))!;
    expect(event.arguments).toBeInstanceOf(SkippedString);
    expect((parseEmbeddedObject(event.arguments, ["path"], 1024) as Record<string, unknown>).path).toBe("a.ts");
    const late = JSON.stringify({ content: "x".repeat(100_000), path: "b.ts" });
    const lateEvent = parseEvent(Buffer.from(JSON.stringify({ arguments: late })))!;
    expect((parseEmbeddedObject(lateEvent.arguments, ["path"], 1024) as Record<string, unknown>).path).toBe("b.ts");
    expect(parseEmbeddedObject({ path: "c.ts" }, ["path"])).toEqual({ path: "c.ts" });
    expect(parseEmbeddedObject("not json", ["path"])).toBeUndefined();
    expect(parseEmbeddedObject(42, ["path"])).toBeUndefined();
  });
});
