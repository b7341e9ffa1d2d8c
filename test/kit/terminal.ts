import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI } from "./cli.js";
import { spawnChild } from "./spawner.js";

/**
 * The built CLI on a real pseudo-terminal, as a person runs it: a tmux pane of a fixed size, and
 * in it `script`, which records the bytes the terminal received. Gives what the pane shows at the
 * end (what a person sees) and those bytes (what was drawn and erased on the way).
 */

export interface TerminalRun {
  /** The pane's text at the end, trailing blank lines dropped. */
  screen: string;
  /** Every byte written to the terminal, escapes included. */
  raw: string;
  code: number;
}

export interface TerminalOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  cols?: number;
  rows?: number;
  timeoutMs?: number;
}

let runs = 0;

export async function runOnTerminal(args: string[], options: TerminalOptions = {}): Promise<TerminalRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-tty-"));
  const socket = `uspark-test-${process.pid}-${++runs}`;
  const raw = path.join(dir, "raw");
  const command = [process.execPath, CLI, ...args].map(quote).join(" ");
  // `script -e` exits with the command's code; the marker line says the run is over.
  const shell = `cd ${quote(options.cwd ?? process.cwd())} && script -qfec ${quote(command)} ${quote(raw)}; echo "[exit $?]"; exec sleep 600`;
  const env = { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, ...options.env };
  const tmux = (...tmuxArgs: string[]) => run("tmux", ["-L", socket, ...tmuxArgs], env);
  try {
    await tmux("-f", "/dev/null", "new-session", "-d", "-x", String(options.cols ?? 100), "-y", String(options.rows ?? 40), shell);
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    for (;;) {
      const screen = (await tmux("capture-pane", "-p", "-J")).replace(/\n+$/, "");
      const exit = /^\[exit (\d+)\]$/m.exec(screen);
      if (exit) return { screen: screen.slice(0, exit.index).replace(/\n+$/, ""), raw: readFileSync(raw, "utf8"), code: Number(exit[1]) };
      if (Date.now() > deadline) throw new Error(`uspark ${args.join(" ")} did not end on the terminal in time; the pane:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 50)); // polling the pane: tmux has no event for "the pane printed this"
    }
  } finally {
    await tmux("kill-server").catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A tmux client: it reads no input (its stdin ends at once). */
async function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = await spawnChild(command, args, { env });
  child.stdin.end();
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code: number | null) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(" ")}: exit ${code}: ${err}`)),
    );
  });
}
