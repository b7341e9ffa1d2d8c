import { describe, expect, it } from "vitest";
import { FormatCheck } from "../../src/agents/format-check.js";
import { AGENTS, agentNames } from "../../src/agents/index.js";
import { fixture } from "../kit/agent-fixtures.js";

/** The formats `FormatCheck` names for `session` read as `given`'s stream, fed in chunks of `chunk` bytes ("one object" for a lone object of no agent's). */
function othersNamed(given: string, session: string, chunk = 97, maxBytes?: number): string[] {
  const named: string[] = [];
  const check = new FormatCheck(
    AGENTS[given]!,
    { other: (format) => named.push(format.name), oneObject: () => named.push("one object") },
    maxBytes,
  );
  const bytes = Buffer.from(session);
  for (let at = 0; at < bytes.length && !check.done; at += chunk) check.push(bytes.subarray(at, at + chunk));
  check.end();
  return named;
}

describe("FormatCheck: is this stream the format the user named?", () => {
  it.each(agentNames)("says nothing on %s's own stream", (name) => {
    expect(othersNamed(name, fixture(name).session)).toEqual([]);
  });

  it("names the format auto-detection would choose for another agent's stream, once", () => {
    expect(othersNamed("claude", fixture("codex").session)).toEqual(["codex"]);
    expect(othersNamed("codex", fixture("claude").session)).toEqual(["claude"]);
    expect(othersNamed("claude", fixture("gemini").session, 1)).toEqual(["gemini"]);
  });

  it("names a stream in Claude's shape that says whose it is (Qwen's tools are not Claude's)", () => {
    expect(othersNamed("claude", fixture("qwen").session)).toEqual(["qwen"]);
  });

  it("says nothing about text, arrays and strings, or what comes after its budget", () => {
    expect(othersNamed("claude", ["plain text", "[1,2]", '"a string"', ""].join("\n"))).toEqual([]);
    const late = `${Array(200).fill("x".repeat(100)).join("\n")}\n${fixture("codex").session}`;
    expect(othersNamed("claude", late, 4096, 10_000)).toEqual([]);
  });

  it("says when the whole stream was one JSON object of no agent's (claude -p --output-format json), and only then", () => {
    const result = JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "done", session_id: "s" });
    expect(othersNamed("claude", `${result}\n`)).toEqual(["one object"]);
    expect(othersNamed("claude", `some text\n${result}`)).toEqual(["one object"]);
    // Events detection does not claim, which a parser may still read (hand-made, without Claude's session_id).
    const neutral = JSON.stringify({ type: "assistant", message: { content: [] } });
    expect(othersNamed("claude", `${neutral}\n${result}\n`)).toEqual([]);
    expect(othersNamed("claude", Array(70).fill(neutral).join("\n"))).toEqual([]);
  });

  it("with no agent named (auto-detection), tells only of a lone object", () => {
    const named: string[] = [];
    const listener = { other: (format: { name: string }) => named.push(format.name), oneObject: () => named.push("one object") };
    const check = new FormatCheck(undefined, listener);
    check.push(Buffer.from(fixture("codex").session));
    check.end();
    const lone = new FormatCheck(undefined, listener);
    lone.push(Buffer.from('{"type":"result","result":"done"}\n'));
    lone.end();
    expect(named).toEqual(["one object"]);
  });

  it("is done once it decided, and reads nothing more", () => {
    const check = new FormatCheck(AGENTS.claude!, { other: () => {}, oneObject: () => {} });
    check.push(Buffer.from(fixture("claude").session));
    expect(check.done).toBe(true);
  });
});
