import { describe, expect, it } from "vitest";
import { FormatCheck } from "../../src/agents/format-check.js";
import { AGENTS, agentNames } from "../../src/agents/index.js";
import { fixture } from "./helpers.js";

/** The formats `FormatCheck` names for `session` read as `given`'s stream, fed in chunks of `chunk` bytes. */
function othersNamed(given: string, session: string, chunk = 97, maxBytes?: number): string[] {
  const named: string[] = [];
  const check = new FormatCheck(AGENTS[given]!, (format) => named.push(format.name), maxBytes);
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

  it("says nothing about text, JSON no format claims, or what comes after its budget", () => {
    const neutral = JSON.stringify({ note: "a wrapper event" });
    expect(othersNamed("claude", ["plain text", neutral, "[1,2]", '"a string"', ""].join("\n"))).toEqual([]);
    const late = `${Array(200).fill("x".repeat(100)).join("\n")}\n${fixture("codex").session}`;
    expect(othersNamed("claude", late, 4096, 10_000)).toEqual([]);
  });

  it("is done once it decided, and reads nothing more", () => {
    const check = new FormatCheck(AGENTS.claude!, () => {});
    check.push(Buffer.from(fixture("claude").session));
    expect(check.done).toBe(true);
  });
});
