import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";
import { EXIT } from "../util/exit-codes.js";
import type { Reporter } from "../report/reporter.js";
import type { Watcher } from "../watcher/watcher.js";
import { commandName } from "../agents/commands.js";
import { runExitCode, type AgentExit } from "./run.js";
import type { RunView } from "../terminal/run-view.js";
import { failureReason, StreamTail } from "./stream-tail.js";
import { shellWord } from "../terminal/terminal-text.js";
import { runSession } from "./session.js";
import { errorCode, errorText } from "../errors/text.js";

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
  /** After the agent exited, how long its stdout may stay open (a background process it left holds it). */
  exitGraceMs: number;
  /** On a terminal: the run view takes the agent's stdout instead of our stdout (terminal/run-view.ts). */
  view?: RunView;
  /** The agent's stream format, when known: to read its failure reason where no view shows it. */
  format?: string;
}

type AgentChild = ChildProcessByStdio<null, Readable, null>;

export async function runAgent({ command, args, watcher, report, exitGraceMs, view, format }: RunAgentOptions): Promise<number> {
  let child: AgentChild;
  try {
    child = await startAgent(command, args, agentEnvironment(process.env));
  } catch (error) {
    const code = errorCode(error);
    const name = commandName(command);
    if (code === "ENOENT") report.error("run", `command not found: ${command}`, { command });
    else if (code === "EACCES")
      report.error("run", `cannot start ${name}: permission denied (not executable? chmod +x ${shellWord(command)})`, { command });
    else report.error("run", `cannot start ${name}: ${errorText(error)}`, { command });
    // Nothing ran, so nothing can have changed because of it: no flush to wait for.
    return code === "ENOENT" ? EXIT.notFound : EXIT.cannotExecute;
  }
  const exited = new Promise<AgentExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  // The view shows the agent's failure reason on a terminal; elsewhere stderr says it (below).
  const tail = view ? undefined : new StreamTail();
  const end = await runSession({
    watcher,
    report,
    input: child.stdout,
    tap: tail && ((chunk) => tail.push(chunk)),
    output: view ?? process.stdout,
    forwardSignal: (signal) => running(child) && child.kill(signal),
    endEarly: stdoutHeldPastGrace(child, exited, exitGraceMs, report),
  });
  if (end.aborted) return end.exitCode;
  await view?.finish();
  const agent = await exited;
  if (agent.code !== 0) sayAgentExit(commandName(command), agent, tail && failureReason(tail.bytes(), format), report);
  return runExitCode(agent, end.exitCode);
}

/** A failed agent's exit, with its own reason when its stream gave one that nobody saw. */
function sayAgentExit(name: string, agent: AgentExit, reason: string | undefined, report: Reporter): void {
  const how = agent.signal ?? `code ${agent.code}`;
  if (reason === undefined) return report.info("run", `${name} exited with ${how}`, { ...agent });
  const [first = "", ...more] = reason.split(/\r?\n/);
  const rest = more.length > 0 ? ` (+${more.length} more line${more.length === 1 ? "" : "s"} in its output)` : "";
  report.error("run", `${name} failed: ${first}${rest} (exit ${agent.signal ? `by ${agent.signal}` : how})`, { ...agent, reason });
}

function running(child: AgentChild): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Resolves when the agent has exited and its stdout is still open `graceMs` later: a process it
 * left behind (`npm run dev &`, a language server) holds the pipe and may do so forever. The run
 * stops reading it then and ends with the agent; never resolves when stdout ends in time. While
 * the run itself does not read it (a slow reader of our stdout, the transcript's spool behind),
 * the agent's last output may still be in the pipe: the grace starts again.
 */
export function stdoutHeldPastGrace(child: AgentChild, exited: Promise<AgentExit>, graceMs: number, report: Reporter): Promise<void> {
  return new Promise((resolve) => {
    void exited.then(() => {
      if (child.stdout.readableEnded) return;
      let timer: NodeJS.Timeout;
      const check = () => {
        if (child.stdout.isPaused()) {
          timer = setTimeout(check, graceMs);
          return;
        }
        report.warn(
          "run",
          `${commandName(child.spawnfile)}'s output is still held open ${graceMs} ms after it exited (by a process it left running?): no longer reading it`,
        );
        resolve();
        // After the session stopped reading it: the pipe must not keep this process alive.
        setImmediate(() => child.stdout.destroy());
      };
      timer = setTimeout(check, graceMs);
      child.stdout.once("end", () => clearTimeout(timer));
    });
  });
}

/**
 * Environment variables that hold a uspark credential: never handed to the agent, which may
 * print its environment or be talked into sending it somewhere.
 */
const CREDENTIAL_VARIABLES = /^USPARK_(?:.*_)?(?:TOKEN|SECRET|PASSWORD|KEY|DATABASE_URL)$/i;

export function agentEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !CREDENTIAL_VARIABLES.test(name)));
}

/** Resolves once the process is running; rejects with spawn's error (ENOENT: not found; EACCES: not executable). */
function startAgent(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<AgentChild> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["inherit", "pipe", "inherit"], env });
    child.once("spawn", () => resolve(child));
    child.once("error", reject);
  });
}
