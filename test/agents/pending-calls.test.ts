import { describe, expect, it } from "vitest";
import { claude } from "../../src/agents/claude.js";
import { PendingCalls } from "../../src/agents/pending-calls.js";
import { stringValueAfter } from "../../src/agents/sparse-json.js";
import type { FileChange } from "../../src/agents/types.js";

const CALLS = 20_000;

function pendingCalls(options: { now?: () => number } = {}) {
  const emitted: FileChange[] = [];
  const calls = new PendingCalls((change) => emitted.push(change), { idKeys: ["tool_use_id"], ...options });
  return { calls, emitted };
}

const change = (i: number) => ({ path: `f${i}.txt`, kind: "write" as const, cause: "Write" });
const resultLine = (id: string) => Buffer.from(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"${id}"}]}}`);

describe("calls whose result never comes", () => {
  it("checks each later line with one lookup per id it names, however many calls wait", () => {
    const { calls } = pendingCalls();
    for (let i = 0; i < CALLS; i++) calls.add(`call_${i}`, [change(i)]);
    for (let i = 0; i < CALLS; i++) expect(calls.mentionedIn(resultLine(`other_${i}`))).toBe(false);
    expect(calls.lookups).toBe(CALLS);
    expect(calls.mentionedIn(resultLine(`call_${CALLS - 1}`))).toBe(true);
  });

  it("keeps at most 10,000 and reports the oldest ones it lets go as unconfirmed changes", () => {
    const { calls, emitted } = pendingCalls();
    for (let i = 0; i < CALLS; i++) calls.add(`call_${i}`, [change(i)]);
    expect(calls.size).toBe(10_000);
    expect(emitted).toHaveLength(10_000);
    expect(emitted[0]).toStrictEqual({ path: "f0.txt", kind: "write", cause: "Write", confirmed: false });
    expect(emitted.at(-1)!.path).toBe("f9999.txt");
  });

  it("reports a call that has waited longer than an hour as unconfirmed", () => {
    let now = 0;
    const { calls, emitted } = pendingCalls({ now: () => now });
    calls.add("old", [change(1)]);
    now = 60 * 60 * 1000 + 1;
    calls.add("new", [change(2)]);
    expect(emitted).toStrictEqual([{ path: "f1.txt", kind: "write", cause: "Write", confirmed: false }]);
    expect(calls.has("new")).toBe(true);
  });

  it("reads the id a result names, escaped or spaced", () => {
    const line = Buffer.from('{"tool_use_id" : "a\\"b", "x":1}');
    expect(stringValueAfter(line, line.indexOf('"tool_use_id"') + 13)).toBe('a"b');
    expect(stringValueAfter(Buffer.from('"k":1'), 3)).toBeUndefined();
  });

  it("lets a Claude stream with 20,000 unanswered Writes and 20,000 other results through quickly", () => {
    const emitted: FileChange[] = [];
    const parser = claude.create((c) => emitted.push(c));
    const output = "x".repeat(2000);
    for (let i = 0; i < CALLS; i++) {
      const block = { type: "tool_use", id: `toolu_${i}`, name: "Write", input: { file_path: `/p/f${i}.txt`, content: "y" } };
      parser.line(Buffer.from(JSON.stringify({ type: "assistant", message: { content: [block] }, session_id: "s" })));
    }
    const started = performance.now();
    for (let i = 0; i < CALLS; i++) {
      const block = { type: "tool_result", tool_use_id: `toolu_other_${i}`, content: output };
      parser.line(Buffer.from(JSON.stringify({ type: "user", message: { content: [block] }, session_id: "s" })));
    }
    // Generous for a loaded machine: checking every line against every call took minutes.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(emitted).toHaveLength(10_000);
    expect(emitted.every((c) => !c.confirmed)).toBe(true);
    parser.end();
    expect(emitted).toHaveLength(CALLS);
  });
});
