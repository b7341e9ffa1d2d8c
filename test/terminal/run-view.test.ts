import { execFileSync } from "node:child_process";
import { EventEmitter } from "node:events";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RunView, runViewWanted } from "../../src/terminal/run-view.js";
import { textWidth } from "../../src/terminal/terminal-text.js";
import { runCli } from "../kit/cli.js";
import { runOnTerminal } from "../kit/terminal.js";
import { perTest } from "../kit/fixtures.js";

/**
 * `uspark run` on a terminal shows a person's view (issue 20 item 4: "`uspark run -- claude …` on a
 * terminal prints raw JSON lines; when the agent fails, its reason is buried in them"); --raw, a
 * pipe or a file get the agent's bytes unchanged.
 */

const TALKING_AGENT = path.join(import.meta.dirname, "talking-agent.mjs");

/** A terminal that keeps what it is given, in `text`. */
class FakeTerminal extends EventEmitter {
  text = "";
  constructor(readonly columns: number) {
    super();
  }
  write(chunk: string | Buffer, done?: (error?: Error | null) => void): boolean {
    this.text += chunk.toString();
    done?.();
    return true;
  }
}

const line = (event: unknown) => JSON.stringify(event) + "\n";
const call = (id: string, name: string, input: unknown) =>
  line({ type: "assistant", message: { content: [{ type: "tool_use", id, name, input }] } });
const answer = (id: string, content: string, isError = false) =>
  line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] } });

async function view(
  input: string[],
  options: { columns?: number; color?: boolean; commits?: string[]; pulls?: string[] } = {},
): Promise<string> {
  const terminal = new FakeTerminal(options.columns ?? 60);
  const runView = new RunView({ terminal, format: "claude", root: "/work/app", color: options.color ?? false });
  for (const chunk of input)
    await new Promise<void>((resolve, reject) => runView.write(Buffer.from(chunk), (error) => (error ? reject(error) : resolve())));
  for (const message of options.commits ?? []) expect(runView.report({ level: "info", event: "commit", message })).toBe(true);
  for (const message of options.pulls ?? []) expect(runView.report({ level: "info", event: "pulled", message })).toBe(true);
  await runView.finish();
  return terminal.text;
}

describe("the run view", () => {
  it("shows each finished call once, commits as they come, plain text as it came, and the result last", async () => {
    const input = [
      call("t1", "Write", { file_path: "/work/app/src/a.ts", content: "x" }),
      answer("t1", "ok"),
      call("t2", "Bash", { command: "npm test" }),
      answer("t2", "Exit code 1\nFAIL src/a.test.ts", true),
      "plain words\n",
      line({ type: "result", subtype: "success", is_error: false, result: "Done.\nTwo lines." }),
      call("t3", "Read", { file_path: "/work/app/b.ts" }),
    ];
    expect(await view(input, { commits: ["committed v2: 1 file (src/a.ts)"] })).toBe(
      [
        "✓ Write src/a.ts",
        "✗ Bash npm test: Exit code 1",
        "plain words",
        "↑ committed v2: 1 file (src/a.ts)",
        "… Read b.ts (no result)",
        "✓ done: Done.",
        "Two lines.",
        "",
      ].join("\n"),
    );
  });

  it("shows what a two-way run pulled as it shows commits, marked down, not up", async () => {
    const shown = await view([call("t1", "Read", { file_path: "/work/app/a.ts" }), answer("t1", "ok")], {
      pulls: ["pulled v3: 2 files (b.ts, old.ts deleted)"],
    });
    expect(shown.split("\n")).toEqual(["✓ Read a.ts", "↓ pulled v3: 2 files (b.ts, old.ts deleted)", ""]);
  });

  it("says a failed run's reason at the end, in red with colours, and nothing of the JSON", async () => {
    const failed = line({ type: "result", subtype: "error_during_execution", is_error: true, errors: ["the model is overloaded (529)"] });
    expect(await view([failed])).toBe("✗ failed: the model is overloaded (529)\n");
    expect(await view([failed], { color: true })).toBe("\x1b[31m✗ failed\x1b[39m: the model is overloaded (529)\n");
  });

  it("escapes control characters and cuts long lines to the terminal's width, a line split across chunks read whole", async () => {
    const write = call("t1", "Write", { file_path: "/work/app/evil\x1b[2J.ts", content: "" }) + answer("t1", "ok");
    const long = call("t2", "Bash", { command: "echo " + "é".repeat(100) }) + answer("t2", "ok");
    const shown = await view([write.slice(0, 30), write.slice(30), long], { columns: 30 });
    expect(shown.split("\n")).toEqual(["✓ Write evil\\x1b[2J.ts", `✓ Bash echo ${"é".repeat(17)}…`, ""]);
    expect(textWidth(shown.split("\n")[1]!)).toBe(30);
  });

  it("a terminal whose width is 0 (a pseudo-terminal nobody sized: script, docker exec -t) is taken as 80 columns, not cut to 10", async () => {
    const bash = call("t1", "Bash", { command: "npm test -- --run test/lifecycle" }) + answer("t1", "ok");
    expect(await view([bash], { columns: 0 })).toBe("✓ Bash npm test -- --run test/lifecycle\n");
  });

  it("shows a JSON stream no reader recognises as it came, rather than nothing", async () => {
    const terminal = new FakeTerminal(60);
    const runView = new RunView({ terminal, root: "/work/app", color: false });
    await new Promise((resolve) => runView.write(Buffer.from('{"event":"step","n":1}\n{"event":"step","n":2}\n'), resolve));
    await runView.finish();
    expect(terminal.text).toBe('{"event":"step","n":1}\n{"event":"step","n":2}\n');
  });

  it("is on only for a terminal without --raw", () => {
    expect(runViewWanted(undefined, true)).toBe(true);
    expect(runViewWanted(true, true)).toBe(false);
    expect(runViewWanted(undefined, false)).toBe(false);
  });
});

describe("uspark run, through the built CLI", () => {
  const t = perTest("uspark-run-view-", { server: true });
  const run = (how: string, ...extra: string[]) => [
    "run",
    "--project-id",
    "p1",
    "--api-url",
    t.server!.url,
    "--root",
    t.root,
    ...extra,
    "--",
    process.execPath,
    TALKING_AGENT,
    how,
    path.join(t.root, "a.txt"),
  ];
  const COLUMNS = 72;

  it("on a terminal: one line per call and commit, the failure's reason at the end, nothing wider than the terminal", async () => {
    const seen = await runOnTerminal(run("fail"), { cols: COLUMNS, env: { NO_COLOR: "1" } });
    expect(seen.code).toBe(1);
    const lines = seen.screen.split("\n");
    expect(lines).toContain("✓ Write a.txt");
    expect(lines).toContain("✗ Bash npm test: Exit code 1");
    expect(lines).toContain("↑ committed v1: 1 file (a.txt)");
    expect(lines.filter((l) => l.includes("committed v1"))).toHaveLength(1); // not on stderr a second time
    expect(lines.at(-2)).toBe("✗ failed: the model is overloaded (529)");
    expect(lines.at(-1)).toBe("uspark: node exited with code 1");
    expect(seen.screen).not.toContain('{"type"');
    for (const shown of lines) expect(textWidth(shown)).toBeLessThanOrEqual(COLUMNS);
    expect(seen.raw).not.toMatch(/\x1b\[3\dm✓/); // NO_COLOR
  });

  it("on a terminal: long summaries are cut to its width; colours unless NO_COLOR", async () => {
    const seen = await runOnTerminal([...run("ok").slice(0, -1), path.join(t.root, "a.txt"), "300"], { cols: COLUMNS });
    expect(seen.code, seen.screen).toBe(0);
    expect(seen.screen.split("\n")).toContain(`✗ Bash npm test ${"x".repeat(COLUMNS - 2 - "Bash npm test ".length - 1)}…`);
    expect(seen.screen).toMatch(/✓ done: Wrote the file\.\nThe tests fail: see above\.$/);
    expect(seen.raw).toContain("\x1b[32m✓");
  });

  it("with --raw on a terminal: the agent's lines as it wrote them", async () => {
    const seen = await runOnTerminal(run("ok", "--raw"), { cols: 400, env: { NO_COLOR: "1" } });
    expect(seen.code).toBe(0);
    expect(seen.screen).toMatch(/^\{"type":"system","subtype":"init"/m);
    expect(seen.screen).not.toContain("✓ Write");
  });

  it("in a pipe: the agent's stdout byte for byte, as the agent alone prints it", async () => {
    const alone = execFileSync(process.execPath, [TALKING_AGENT, "ok", path.join(t.root, "alone.txt")], { cwd: t.root });
    const piped = await runCli(run("ok"), { cwd: t.root });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout.toString().replaceAll(path.join(t.root, "a.txt"), "F")).toBe(
      alone.toString().replaceAll(path.join(t.root, "alone.txt"), "F"),
    );
  });
});
