import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";

const FIXTURES = path.join(import.meta.dirname, "..", "..", "fixtures");
const RECORDED_ROOT = "/workspace/project";

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-dry-")));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function fixture(agent: string): string {
  return readFileSync(path.join(FIXTURES, agent, "session.jsonl"), "utf8")
    .split(RECORDED_ROOT)
    .join(root);
}

interface Expected {
  path: string;
  kind: string;
  cause: string;
  confirmed: boolean;
  cwd?: string;
}

/** What the dry run must print for a fixture: every expected change that lands inside the root. */
function expectedChanges(agent: string): { path: string; kind: string; cause: string; confirmed: boolean }[] {
  const expected = JSON.parse(readFileSync(path.join(FIXTURES, agent, "expected.json"), "utf8")) as Expected[];
  return expected
    .map((change) => ({
      ...change,
      abs: path.resolve((change.cwd ?? RECORDED_ROOT).split(RECORDED_ROOT).join(root), change.path.split(RECORDED_ROOT).join(root)),
    }))
    .filter((change) => change.abs.startsWith(root + path.sep))
    .map((change) => ({ path: path.relative(root, change.abs), kind: change.kind, cause: change.cause, confirmed: change.confirmed }));
}

function records(stderr: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("watch-claude --dry-run", () => {
  it("should report exactly the changes of the recorded Claude session", async () => {
    const input = fixture("claude");
    const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", root], { input });
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe(input);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toEqual([
      "uspark: would push src/app.ts (Edit)",
      "uspark: would push src/util.ts (Write)",
      "uspark: would push src/util.ts (MultiEdit)",
      "uspark: would push notebooks/analysis.ipynb (NotebookEdit)",
      "uspark: would push README.md (Edit)",
      `uspark: warning: refused ${root}-evil/x.txt: outside the project root ${root}`,
      "uspark: would push docs/notes.md (Write)",
      "uspark: would push src/app.ts (Edit, unconfirmed: checked by hash)",
      "uspark: dry run: 5 files would be pushed (7 changes, 1 refused)",
    ]);
  });

  it("should write NDJSON records with --log-format json", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", root, "--log-format", "json"], {
      input: fixture("claude"),
    });
    const all = records(result.stderr);
    expect(all.filter((r) => r.event === "change").map((r) => [r.path, r.cause, r.confirmed])).toEqual(
      expectedChanges("claude").map((c) => [c.path, c.cause, c.confirmed]),
    );
    expect(all.filter((r) => r.event === "refused")).toHaveLength(1);
    expect(all.at(-1)).toMatchObject({ event: "summary", level: "info", detected: 7, refused: 1 });
  });

  it("should say nothing but errors with --quiet", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", root, "--quiet"], { input: fixture("claude") });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });
});

describe("an edit repeated in a dry run", () => {
  const write = (id: string, file: string) =>
    JSON.stringify({
      type: "assistant",
      message: { content: [{ type: "tool_use", id, name: "Write", input: { file_path: file, content: "x" } }] },
    }) +
    "\n" +
    JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } }) +
    "\n";
  const input = () =>
    ["a", "b", "c"].map((id) => write(id, path.join(root, "src/app.ts"))).join("") + write("d", path.join(root, "README.md"));

  it("should say each line once, and count every change in the summary", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", root], { input: input() });
    expect(result.code).toBe(0);
    expect(result.stderr.trim().split("\n")).toEqual([
      "uspark: would push src/app.ts (Write)",
      "uspark: would push README.md (Write)",
      "uspark: dry run: 2 files would be pushed (4 changes)",
    ]);
  });

  it("should show every change with --verbose", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", root, "--verbose"], { input: input() });
    expect(result.stderr.split("\n").filter((line) => line.includes("would push src/app.ts (Write)"))).toHaveLength(3);
  });
});

describe("watch --agent auto --dry-run", () => {
  const agents = readdirSync(FIXTURES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

  it.each(agents)("should recognise the %s stream and report its changes", async (agent) => {
    const input = fixture(agent);
    // Run where the agent runs (a shell pipe in the project): its relative paths are relative to it.
    const result = await runCli(["watch", "--dry-run", "--no-fs-watch", "--root", root, "--log-format", "json", "--verbose"], {
      input,
      cwd: root,
    });
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe(input);
    const all = records(result.stderr);
    // Kilo prints OpenCode's stream: it is detected as that format.
    expect(all.find((r) => r.event === "agent")).toMatchObject({ agent: agent === "kilo" ? "opencode" : agent });
    expect(
      all.filter((r) => r.event === "change").map((r) => ({ path: r.path, kind: r.kind, cause: r.cause, confirmed: r.confirmed })),
    ).toEqual(expectedChanges(agent));
  });
});

describe("relative paths in a stream that names no working directory", () => {
  it("should resolve them against the directory uspark runs in, not --root", async () => {
    mkdirSync(path.join(root, "sub"));
    const write = (id: string, file: string) =>
      JSON.stringify({ type: "tool_use", tool_name: "write_file", tool_id: id, parameters: { file_path: file, content: "x" } }) +
      "\n" +
      JSON.stringify({ type: "tool_result", tool_id: id, status: "success" }) +
      "\n";
    const input = JSON.stringify({ type: "init", session_id: "s", model: "m" }) + "\n" + write("w1", "notes.md");
    const result = await runCli(["watch", "--agent", "gemini", "--dry-run", "--no-fs-watch", "--root", root, "--log-format", "json"], {
      input,
      cwd: path.join(root, "sub"),
    });
    expect(result.code).toBe(0);
    expect(
      records(result.stderr)
        .filter((r) => r.event === "change")
        .map((r) => r.path),
    ).toEqual(["sub/notes.md"]);
  });
});
