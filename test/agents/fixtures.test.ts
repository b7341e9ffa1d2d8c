import { describe, expect, it } from "vitest";
import { createAutoParser } from "../../src/agents/detect.js";
import { AGENTS, agentNames } from "../../src/agents/index.js";
import type { AgentFormat, FileChange } from "../../src/agents/types.js";
import { feed, fixture } from "../kit/agent-fixtures.js";

describe.each(agentNames)("the %s fixture", (agent) => {
  const { session, expected } = fixture(agent);
  const format = AGENTS[agent]!;

  it("yields exactly the expected changes, in order", () => {
    const changes: FileChange[] = [];
    feed(
      format.create((change) => changes.push(change)),
      session,
    );
    expect(changes).toStrictEqual(expected);
  });

  it("yields the same changes with CRLF line endings", () => {
    const changes: FileChange[] = [];
    feed(
      format.create((change) => changes.push(change)),
      session.replaceAll("\n", "\r\n"),
    );
    expect(changes).toStrictEqual(expected);
  });

  it("is recognised by auto-detection, which then reports the same changes", () => {
    const changes: FileChange[] = [];
    const detected: Array<AgentFormat | undefined> = [];
    feed(
      createAutoParser(
        (change) => changes.push(change),
        (f) => detected.push(f),
      ),
      session,
    );
    expect(detected.map((f) => f?.name)).toEqual([agent]);
    expect(changes).toStrictEqual(expected);
  });

  it("is recognised from its first JSON event alone", () => {
    const first = session.split("\n").find((line) => line.startsWith("{"))!;
    const winner = [...Object.values(AGENTS)].filter((f) => f.detect(JSON.parse(first)));
    expect(winner.map((f) => f.name)).toContain(agent);
  });

  it("yields nothing when read as another agent's stream, but the same when Claude's parser reads a stream of its shape", () => {
    for (const other of Object.values(AGENTS)) {
      if (other === format) continue;
      const changes: FileChange[] = [];
      feed(
        other.create((change) => changes.push(change)),
        session,
      );
      // Taken for Claude's, a Qwen or Amp stream must lose nothing: that parser knows their tools.
      const same = other === AGENTS.claude && (agent === "qwen" || agent === "amp");
      expect(changes, `${other.name} reading the ${agent} stream`).toStrictEqual(same ? expected : []);
    }
  });
});

it("has a fixture for every agent", () => {
  expect([...agentNames].sort()).toEqual([
    "acai",
    "amp",
    "claude",
    "codex",
    "copilot",
    "cursor",
    "droid",
    "gemini",
    "kimi",
    "opencode",
    "qwen",
  ]);
});

/** Second streams from real runs, where an agent's tools differ by model: `fixtures/<agent>/<name>.jsonl`. */
describe.each([
  ["copilot", "edit-tools"],
  ["droid", "edit-tools"],
])("the %s %s stream (a real run)", (agent, name) => {
  const { session, expected } = fixture(agent, name);

  it("yields exactly the expected changes, and is recognised by auto-detection", () => {
    const changes: FileChange[] = [];
    const detected: Array<AgentFormat | undefined> = [];
    feed(
      createAutoParser(
        (change) => changes.push(change),
        (f) => detected.push(f),
      ),
      session,
    );
    expect(detected.map((f) => f?.name)).toEqual([agent]);
    expect(changes).toStrictEqual(expected);
  });
});
