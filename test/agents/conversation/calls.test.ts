import { describe, expect, it } from "vitest";
import { MAX_CALLS, ToolCalls } from "../../../src/agents/conversation/calls.js";

const call = { name: "Edit", summary: "a.ts", files: ["a.ts"] };

describe("ToolCalls", () => {
  it("pairs a call with its result by id", () => {
    const calls = new ToolCalls();
    expect(calls.start("c1", call)).toEqual({ kind: "tool", id: "c1", ...call, status: "running" });
    expect(calls.finish("c1", { ok: true })).toEqual([{ kind: "tool", id: "c1", ...call, status: "ok" }]);
    expect(calls.end()).toEqual([]);
  });

  it("a result's files replace the call's: what it really wrote", () => {
    const calls = new ToolCalls();
    calls.start("c1", { name: "apply_patch", summary: "a, b", files: ["a", "b"] });
    expect(calls.finish("c1", { ok: false, error: "half applied", files: ["a"] })).toEqual([
      { kind: "tool", id: "c1", name: "apply_patch", summary: "a, b", files: ["a"], status: "failed", error: "half applied" },
    ]);
  });

  it("a repeated id counts from its latest call", () => {
    const calls = new ToolCalls();
    calls.start("c1", call);
    calls.start("c1", { ...call, summary: "b.ts" });
    expect(calls.finish("c1", { ok: true })).toEqual([{ kind: "tool", id: "c1", ...call, summary: "b.ts", status: "ok" }]);
  });

  it("a second result for the same call: the call is already over, so it reads as a result before its call", () => {
    const calls = new ToolCalls();
    calls.start("c1", call);
    calls.finish("c1", { ok: true });
    expect(calls.finish("c1", { ok: false, error: "x" })).toEqual([
      { kind: "tool", id: "c1", name: "", summary: "", files: [], status: "failed", error: "x" },
    ]);
  });

  it("a call seen whole (start and end in one event), then its start coming late: the start takes that outcome", () => {
    const calls = new ToolCalls();
    calls.whole("c1", call, { ok: false, error: "boom" });
    expect(calls.start("c1", call)).toEqual({ kind: "tool", id: "c1", ...call, status: "failed", error: "boom" });
    expect(calls.end()).toEqual([]);
  });

  it("the steps it returns are copies: changing one changes nothing held", () => {
    const calls = new ToolCalls();
    const step = calls.start("c1", { ...call, files: ["a.ts"] });
    step.files.push("evil");
    expect(calls.finish("c1", { ok: true })[0]?.files).toEqual(["a.ts"]);
  });

  it(`holds at most ${MAX_CALLS} running calls: the oldest is forgotten (its result then reads as one before its call)`, () => {
    const calls = new ToolCalls();
    for (let i = 0; i <= MAX_CALLS; i++) calls.start(`c${i}`, call);
    expect(calls.isRunning("c0")).toBe(false);
    expect(calls.isRunning(`c${MAX_CALLS}`)).toBe(true);
    expect(calls.end()).toHaveLength(MAX_CALLS);
  });

  it(`remembers at most ${MAX_CALLS} results that came before their calls`, () => {
    const calls = new ToolCalls();
    for (let i = 0; i <= MAX_CALLS; i++) calls.finish(`r${i}`, { ok: true });
    // The oldest was forgotten: its call now starts running; a later one takes its remembered outcome.
    expect(calls.start("r0", call).status).toBe("running");
    expect(calls.start(`r${MAX_CALLS}`, call).status).toBe("ok");
  });
});
