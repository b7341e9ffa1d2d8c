import { describe, expect, it } from "vitest";
import { Needle } from "../../src/agents/needle.js";

const TOOL_USE = new Needle("tool_use");
const pad = (length: number, byte = "x") => byte.repeat(length);

/** Where `indexIn` must answer what a plain search answers, on short and long haystacks alike. */
const cases: Array<[name: string, haystack: string, from: number]> = [
  ["absent, short", `{"type":"text","text":"no call here"}`, 0],
  ["at the start", `"tool_use" and more`, 0],
  ["at the very end", `${pad(100)}"tool_use"`, 0],
  ["before `from` only", `"tool_use"${pad(50)}`, 1],
  ["after `from`", `${pad(20)}"tool_use"${pad(20)}`, 5],
  ["without its quotes", `tool_use ${pad(10)}`, 0],
  ["among Claude's own keys full of _", `{"input_tokens":4,"cache_read_input_tokens":1,"parent_tool_use_id":null,"type":"tool_use"}`, 0],
  ["absent among many _, short", pad(1500, "a_"), 0],
  ["absent, long (rare byte never met)", pad(100_000), 0],
  ["far into a long haystack", `${pad(50_000)}"tool_use"${pad(10)}`, 0],
  ["far into a long haystack of _ (the fallback search)", `${pad(20_000, "_x")}"tool_use"`, 0],
  ["absent from a long haystack of _", pad(20_000, "_x"), 0],
  ["long haystack, short rest after `from`", `${pad(10_000)}"tool_use"`, 9_000],
  ["split by an escape", `"tool\\u005fuse"${pad(3000)}`, 0],
];

describe("Needle.indexIn", () => {
  it.each(cases)("%s: where a plain search finds it", (_name, haystack, from) => {
    const buf = Buffer.from(haystack);
    expect(TOOL_USE.indexIn(buf, from)).toBe(buf.indexOf(TOOL_USE.bytes, from));
  });

  it("finds the needle in a view of a larger buffer, not past the view's end", () => {
    const whole = Buffer.from(`${pad(10)}"tool_u|se" "tool_use"`);
    const view = whole.subarray(0, whole.indexOf("|"));
    expect(TOOL_USE.indexIn(view)).toBe(-1);
    expect(TOOL_USE.indexIn(whole)).toBe(whole.lastIndexOf(TOOL_USE.bytes));
  });
});
