import { describe, expect, it } from "vitest";
import { createAutoParser, DETECTION_ORDER } from "../../src/agents/detect.js";
import { AGENTS, agentByName, agentNames } from "../../src/agents/index.js";
import type { AgentFormat, FileChange } from "../../src/agents/types.js";
import { feed, fixture, write } from "../kit/agent-fixtures.js";

function detect(options?: Parameters<typeof createAutoParser>[2]) {
  const changes: FileChange[] = [];
  const detected: Array<AgentFormat | undefined> = [];
  const parser = createAutoParser(
    (change) => changes.push(change),
    (format) => detected.push(format),
    options,
  );
  return { parser, changes, detected, names: () => detected.map((f) => f?.name ?? null) };
}

const claudeLines = fixture("claude").session.split("\n");

describe("auto-detection", () => {
  it("asks every registered format, the generic Claude shape last", () => {
    expect(DETECTION_ORDER.map((f) => f.name).sort()).toEqual([...agentNames].sort());
    expect(DETECTION_ORDER.at(-1)).toBe(AGENTS.claude);
  });

  it("skips text lines before the first JSON event", () => {
    const run = detect();
    feed(run.parser, ["Loaded cached credentials.", "YOLO mode is enabled.", "", ...claudeLines]);
    expect(run.names()).toEqual(["claude"]);
    expect(run.changes).toStrictEqual(fixture("claude").expected);
  });

  it("replays copies of the held lines, not the caller's reused buffers", () => {
    const run = detect();
    feed(run.parser, fixture("codex").session); // feed() scribbles over each buffer after the call
    expect(run.names()).toEqual(["codex"]);
    expect(run.changes).toStrictEqual(fixture("codex").expected);
  });

  it("keeps waiting through events no format claims, then replays them all", () => {
    const neutral = JSON.stringify({ note: "some wrapper event" });
    const lines = [neutral, neutral, '"a JSON string"', "[1,2]", ...fixture("gemini").session.split("\n")];
    const run = detect();
    feed(run.parser, lines);
    expect(run.names()).toEqual(["gemini"]);
    expect(run.changes).toStrictEqual(fixture("gemini").expected);
  });

  it("gives up after a bounded number of JSON events and then ignores the stream", () => {
    const neutral = JSON.stringify({ note: "unknown" });
    const run = detect({ maxEvents: 5 });
    feed(run.parser, [...Array(5).fill(neutral), ...claudeLines]);
    expect(run.names()).toEqual([null]);
    expect(run.changes).toStrictEqual([]);
  });

  it("gives up after a bounded number of bytes of text", () => {
    const run = detect({ maxBytes: 1000 });
    feed(run.parser, [...Array(100).fill("plain text output, not JSON"), ...claudeLines]);
    expect(run.names()).toEqual([null]);
    expect(run.changes).toStrictEqual([]);
  });

  it("decides at the end of a short stream that it could not tell", () => {
    const run = detect();
    feed(run.parser, ["hello", "world"]);
    expect(run.names()).toEqual([null]);
  });

  it("calls onDetect once, and ends the chosen parser at the end", () => {
    const run = detect();
    const S = "s";
    const use = {
      type: "assistant",
      message: { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: "/p/a" } }] },
      session_id: S,
    };
    feed(run.parser, [JSON.stringify(use), JSON.stringify(use)]);
    expect(run.names()).toEqual(["claude"]);
    expect(run.changes).toStrictEqual([write("/p/a", "Write", { confirmed: false })]);
  });

  it("reads a first line that starts with a byte order mark", () => {
    const run = detect();
    feed(run.parser, ["\uFEFF" + claudeLines[0], ...claudeLines.slice(1)]);
    expect(run.names()).toEqual(["claude"]);
    expect(run.changes).toStrictEqual(fixture("claude").expected);
  });

  it("tells the Claude-shaped streams apart by their first event", () => {
    for (const agent of ["claude", "qwen", "amp", "cursor"]) {
      const first = fixture(agent).session.split("\n")[0]!;
      const run = detect();
      feed(run.parser, [first]);
      expect(run.names(), agent).toEqual([agent]);
    }
  });

  it("still reports the edits of a Qwen or Amp stream taken for Claude's (an init that does not say who it is)", () => {
    const { parser, changes, names } = detect();
    const call = (id: string, name: string, input: object) => ({
      type: "assistant",
      session_id: "s1",
      message: { content: [{ type: "tool_use", id, name, input }] },
    });
    const result = (id: string) => ({
      type: "user",
      session_id: "s1",
      message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
    });
    const lines = [
      { type: "system", subtype: "init", session_id: "s1", cwd: "/p" },
      call("c1", "write_file", { file_path: "/p/a.txt", content: "x" }),
      result("c1"),
      call("c2", "edit", { file_path: "/p/b.txt", old_string: "1", new_string: "2" }),
      result("c2"),
      call("c3", "edit_file", { path: "/p/c.txt", old_str: "1", new_str: "2" }),
      result("c3"),
    ];
    feed(
      parser,
      lines.map((line) => JSON.stringify(line)),
    );
    expect(names()).toEqual(["claude"]);
    expect(changes).toStrictEqual([
      write("/p/a.txt", "write_file", { cwd: "/p" }),
      write("/p/b.txt", "edit", { cwd: "/p" }),
      write("/p/c.txt", "edit_file", { cwd: "/p" }),
    ]);
  });

  it("never takes Factory Droid's stream for Claude's: its init looks like Claude's, its fields and later events do not", () => {
    const droid = fixture("droid");
    const run = detect();
    feed(run.parser, droid.session);
    expect(run.names()).toEqual(["droid"]);
    expect(run.changes).toStrictEqual(droid.expected);
  });

  it("waits past a look-alike init that names no agent, and lets the events after it decide", () => {
    // Droid's init without its one field of its own: Claude's shape alone is no reason to guess.
    const [init, ...rest] = fixture("droid").session.split("\n");
    const { reasoning_effort: _, ...bare } = JSON.parse(init!) as Record<string, unknown>;
    const run = detect();
    feed(run.parser, [JSON.stringify(bare), ...rest]);
    expect(run.names()).toEqual(["droid"]);
    expect(run.changes).toStrictEqual(fixture("droid").expected);
  });

  it("never takes Auggie's one result line (Claude's result shape) for Claude's stream", () => {
    // `auggie --print --output-format json`: one final line, no tool events.
    const result = {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Done.",
      session_id: "0b6d9c4e-1f2a-4b3c-8d4e-5f6a7b8c9d0e",
      num_turns: 3,
      duration_ms: 5120,
    };
    const run = detect();
    feed(run.parser, ["Working...", JSON.stringify(result)]);
    expect(run.names()).toEqual([null]);
  });

  it("still knows Claude's stream by its init's own fields, or by its messages", () => {
    const [init, ...rest] = claudeLines;
    const run = detect();
    feed(run.parser, [init!]);
    expect(run.names()).toEqual(["claude"]);
    const { claude_code_version: _v, apiKeySource: _k, permissionMode: _m, ...bare } = JSON.parse(init!) as Record<string, unknown>;
    const later = detect();
    feed(later.parser, [JSON.stringify(bare), ...rest]);
    expect(later.names()).toEqual(["claude"]);
    expect(later.changes).toStrictEqual(fixture("claude").expected);
  });

  it("survives a format whose detect throws", () => {
    const broken: AgentFormat = {
      name: "broken",
      detect: () => {
        throw new Error("boom");
      },
      create: () => ({ line() {}, end() {} }),
    };
    const run = detect({ formats: [broken, AGENTS.codex!] });
    feed(run.parser, fixture("codex").session);
    expect(run.names()).toEqual(["codex"]);
  });
});

describe("the registry", () => {
  it("names every agent once and finds formats by name only", () => {
    expect(agentNames).toEqual(["claude", "codex", "gemini", "opencode", "cursor", "qwen", "amp", "acai", "kimi", "copilot", "droid"]);
    for (const name of agentNames) expect(agentByName(name)?.name).toBe(name);
    expect(agentByName("toString")).toBeUndefined();
    expect(agentByName("__proto__")).toBeUndefined();
  });
});
