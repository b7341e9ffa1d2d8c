import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createConversationReader } from "../../../src/agents/conversation/index.js";
import { FIXTURES } from "../helpers.js";
import { digest, read } from "./helpers.js";

/**
 * Each fixture stream (fixtures/<agent>/, those of copilot, droid and kilo recorded from real runs)
 * read as a conversation: its prompt where the stream carries it, the agent's words, each tool call
 * as it stands last, and how the run ended.
 */
const EXPECTED: Record<string, { format: string; steps: string[] }> = {
  claude: {
    format: "claude",
    steps: [
      "text: I'll look at the project first.",
      "tool Read ok: /workspace/project/src/app.ts",
      "tool Bash ok: ls src",
      "tool Edit ok: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "tool Write ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool MultiEdit ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool NotebookEdit ok: /workspace/project/notebooks/analysis.ipynb [/workspace/project/notebooks/analysis.ipynb]",
      "tool Edit failed: /workspace/project/src/missing.ts [/workspace/project/src/missing.ts] (File does not exist.)",
      "tool Write failed: /workspace/project/.env [/workspace/project/.env] (Claude requested permissions to write to /workspace/project/.env, but you haven't granted it yet.)",
      "tool Task ok: Update the docs",
      "tool Edit ok: /workspace/project/README.md [/workspace/project/README.md]",
      "tool Write ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool Write ok: docs/notes.md [docs/notes.md]",
      "tool Edit running: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "result failed: error_during_execution",
    ],
  },
  codex: {
    format: "codex",
    steps: [
      "tool command_execution ok: bash -lc ls",
      "tool file_change ok: /workspace/project/src/app.ts, /workspace/project/src/new.ts [/workspace/project/src/app.ts, /workspace/project/src/new.ts]",
      "tool file_change failed: /workspace/project/src/broken.ts [/workspace/project/src/broken.ts] (failed)",
      "tool file_change ok: /workspace/project/old.txt [/workspace/project/old.txt]",
      "tool file_change ok: /workspace/project/docs/guide.md [/workspace/project/docs/guide.md]",
      "tool file_change ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "text: Updated the app; one more change to go.",
      "tool file_change running: /workspace/project/src/later.ts [/workspace/project/src/later.ts]",
    ],
  },
};

describe.each(Object.entries(EXPECTED))("the %s fixture as a conversation", (fixture, { format, steps }) => {
  const [agent, name = "session"] = fixture.split(":") as [string, string?];
  const lines = readFileSync(`${FIXTURES}${agent}/${name}.jsonl`, "utf8").split("\n");

  it("yields its prompt, texts, tool calls and result, by its format's name", () => {
    expect(digest(read(format, lines))).toEqual(steps);
  });

  it("yields the same when the format is detected", () => {
    const reader = createConversationReader("auto");
    const all = lines.flatMap((line) => reader.line(line));
    expect(reader.format).toBe(format);
    expect(digest([...all, ...reader.end()])).toEqual(steps);
  });

  it("yields the same with CRLF line endings", () => {
    expect(digest(read(format, lines.map((line) => `${line}\r`)))).toEqual(steps);
  });
});
