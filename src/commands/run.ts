import { agentNames } from "../agents/index.js";
import { agentForCommand, commandName, missingStreamFlags, printsNoFileEvents } from "../agents/commands.js";
import { EXIT } from "../util/exit-codes.js";
import { colorWanted, type Reporter, type ReportRecord } from "../report/reporter.js";
import { DEFAULTS, type Watcher } from "../watcher/watcher.js";
import type { Command } from "./kit/commander.js";
import { reporterFor, rootOf } from "./kit/connection.js";
import { exit, usageFailure } from "./kit/exit.js";
import { addFlags, choiceFlag, countFlag, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { pull } from "./pull.js";
import { lockRoot, release, sessionFlags, startWatcher, type SessionLock, type Started } from "./watch-session.js";

// `uspark run -- <agent>`: starts the agent, passes its stdout through and syncs what it changes.

const RUN_EXAMPLES = `
Examples:
  $ uspark run --project-id my-app -- claude -p --output-format stream-json --verbose "fix the login bug"
  $ uspark run --project-id my-app -- codex exec --json "add tests"
  $ uspark run --project-id my-app --agent claude -- ./my-agent.sh    # a wrapper that prints Claude's stream
On a terminal, stdout shows a readable view: one line per finished tool call (✓ or ✗) and per
synced commit (↑), and at the end the agent's own result or failure reason; --raw shows the
agent's output unchanged instead. A pipe or a file always gets the agent's stdout unchanged, byte
for byte. Its stdin and stderr are yours. Signals are passed on to it. Exit code: the agent's when
it fails (128+n when signal n ended it), else the sync's.`;

/** run's own flags, then a session's. */
const runFlags = {
  agent: choiceFlag("--agent <name>", "the agent's stream format (default: from the command's name)", ["auto", ...agentNames]),
  pull: switchFlag("--pull", "pull the remote project first; a conflict (or any failed pull) stops before the agent starts"),
  raw: switchFlag(
    "--raw",
    "on a terminal too, print the agent's output unchanged instead of the readable view (a pipe or a file always gets it unchanged)",
  ),
  exitGrace: countFlag(
    "--exit-grace <ms>",
    "after the agent exits, wait this long for its stdout to close (a process it left running may hold it)",
    DEFAULTS.exitGraceMs,
  ),
  twoWay: switchFlag("--two-way", "also follow the remote while the agent runs and write its changes here (never over a local change)"),
  ...sessionFlags,
};

export type RunFlags = FlagValues<typeof runFlags>;

export function addRunCommand(program: Command): void {
  const run = program
    .command("run")
    .description("start an agent, pass its stdout through and sync what it changes; exit with its code when it fails")
    .usage("[options] -- <agent command ...>")
    .argument("<command...>", "the agent command and its arguments, after --");
  addFlags(run, runFlags)
    .addHelpText("after", RUN_EXAMPLES)
    .action((command: string[], flags: RunFlags) => runRunCommand(command, flags));
}

export async function runRunCommand([command, ...args]: string[], flags: RunFlags): Promise<void> {
  const report = reporterFor(flags);
  let lock: SessionLock | undefined;
  try {
    // Before the pull: it writes the tree a watcher of the same root would be syncing.
    lock = flags.dryRun ? undefined : await lockRoot(rootOf(flags), flags, true);
  } catch (error) {
    return usageFailure(report, error);
  }
  // Before the watcher starts, so that the pulled files are the base, not local edits.
  if (flags.pull) {
    const code = await pullBeforeRun(flags);
    if (code !== EXIT.ok) {
      await release(lock);
      return exit(code);
    }
  }
  const missing = missingStreamFlags(command!, args);
  const agent = flags.agent ?? agentForCommand(command!);
  let view: Awaited<ReturnType<typeof runViewFor>>;
  let started: Started;
  try {
    view = await runViewFor(flags, agent);
    // A missing stream flag is named below; the no-JSON warning would say it a second time.
    started = await startWatcher(
      { ...flags, agent },
      { warnNoJson: missing === undefined, listener: view?.listener, commitAgent: "run" },
      lock,
    );
  } catch (error) {
    await release(lock);
    return usageFailure(report, error);
  }
  if (await historyRefused(started.watcher)) {
    await started.watcher.abort();
    await release(lock);
    report.error("run", "the agent was not started: the server's history does not extend this tree's (said above)");
    return exit(EXIT.notSynced);
  }
  if (missing) {
    report.warn(
      "stream-flag",
      `${commandName(command!)} was started without ${missing}: its tool events cannot be read, only the file watcher syncs (uspark never changes the agent's arguments)`,
    );
  }
  if (printsNoFileEvents(command!)) noFileEventsNotice(report, commandName(command!), flags.fsWatch);
  const { runAgent } = await import("../lifecycle/agent-process.js");
  const code = await runAgent({
    command: command!,
    args,
    watcher: started.watcher,
    report,
    exitGraceMs: flags.exitGrace,
    view: view?.view,
    format: agent,
  });
  await release(lock);
  exit(code);
}

/**
 * How long a run waits for the server to be asked about its history before the agent starts anyway
 * (its rounds ask again, and refuse a rewound server then): the agent's start is never held back
 * longer, even by a server that is down (2 s held every run of a CI loop whose server was away).
 */
const HISTORY_CHECK_MS = 300;

/** Whether the sync session refuses the server (a rewound history); a server that does not answer soon does not hold the agent back. */
async function historyRefused(watcher: Watcher): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), HISTORY_CHECK_MS)));
  try {
    return (await Promise.race([watcher.historyRefusal(), late])) !== undefined;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The run view when stdout is a terminal and --raw is not given. It shows the commits; stderr
 * leaves them out when it is the same person's terminal (else its log keeps them).
 */
async function runViewFor(flags: RunFlags, agent: string | undefined) {
  const { RunView, runViewWanted } = await import("../terminal/run-view.js");
  if (!runViewWanted(flags.raw, process.stdout.isTTY)) return undefined;
  const view = new RunView({ terminal: process.stdout, format: agent, root: rootOf(flags), color: colorWanted(true) });
  return { view, listener: (record: ReportRecord) => view.report(record) && process.stderr.isTTY === true };
}

/** Said once, before the agent starts: where its changes will be seen, since its output names none. */
function noFileEventsNotice(report: Reporter, name: string, fsWatch: boolean): void {
  if (fsWatch) report.info("agent", `${name}'s output carries no file events: the file watcher syncs its changes`, { agent: name });
  else
    report.warn(
      "agent",
      `${name}'s output carries no file events and the file watcher is off (--no-fs-watch): only the final scan syncs its changes`,
      { agent: name },
    );
}

async function pullBeforeRun(flags: RunFlags): Promise<number> {
  // What `uspark pull` would do with the same flags (a dry run pulls nothing), never --force or --delete.
  const code = await pull(flags);
  if (code !== EXIT.ok)
    reporterFor(flags).error(
      "run",
      "the pull did not complete cleanly; the agent was not started (resolve the conflicts, or pull with --force)",
    );
  return code;
}
