import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { EXIT } from "../exit-codes.js";
import type { Reporter } from "../report.js";
import type { Watcher } from "../watcher.js";
import { commandName, runExitCode, type AgentExit } from "./run.js";
import { runSession } from "./session.js";

/**
 * The process half of `uspark run`: the agent is started with stdin and stderr inherited and its
 * stdout piped through the session to ours, byte for byte; signals are passed on to it. The
 * exit code is the agent's when it failed, else the sync's.
 */
export interface RunAgentOptions {
  command: string;
  args: readonly string[];
  watcher: Watcher;
  report: Reporter;
}

type AgentChild = ChildProcessByStdio<null, Readable, null>;

export async function runAgent({ command, args, watcher, report }: RunAgentOptions): Promise<number> {
  let child: AgentChild;
  try {
    child = await startAgent(command, args);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const name = commandName(command);
    if (code === "ENOENT") report.error("run", `command not found: ${command}`, { command });
    else report.error("run", `cannot start ${name}: ${(error as Error).message}`, { command });
    // Nothing ran, so nothing can have changed because of it: no flush to wait for.
    return code === "ENOENT" ? EXIT.notFound : EXIT.cannotExecute;
  }
  const exited = new Promise<AgentExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const end = await runSession({
    watcher,
    report,
    input: child.stdout,
    output: process.stdout,
    forwardSignal: (signal) => child.kill(signal),
  });
  if (end.aborted) return end.exitCode;
  const agent = await exited;
  if (agent.code !== 0) report.info("run", `${commandName(command)} exited with ${agent.signal ?? `code ${agent.code}`}`, { ...agent });
  return runExitCode(agent, end.exitCode);
}

/** Resolves once the process is running; rejects with spawn's error (ENOENT: not found; EACCES: not executable). */
function startAgent(command: string, args: readonly string[]): Promise<AgentChild> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["inherit", "pipe", "inherit"] });
    child.once("spawn", () => resolve(child));
    child.once("error", reject);
  });
}
