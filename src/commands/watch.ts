import { isatty } from "node:tty";
import { agentNames } from "../agents/index.js";
import { runSession } from "../lifecycle/session.js";
import { UsageError } from "../config/config.js";
import type { Reporter } from "../report/reporter.js";
import { agentStdin } from "../stream/stdin.js";
import { deferred } from "../util/deferred.js";
import type { Command } from "./kit/commander.js";
import { reporterFor } from "./kit/connection.js";
import { exit, pipeUsageFailure, usageFailure } from "./kit/exit.js";
import { addFlags, choiceFlag, negatedFlag, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { sessionFlags, startWatcher, type SessionFlags, type Started } from "./watch-session.js";

// `uspark watch`: the files an agent's JSON stream on stdin edits, synced while it runs (or, with
// --no-stdin, a daemon syncing the tree).

export const WATCH_EXAMPLES = `
Examples:
  $ claude -p --output-format stream-json --verbose "fix the login bug" | uspark watch-claude --project-id my-app
  $ gemini --output-format stream-json -p "add tests" | uspark watch --project-id my-app --ignore "*.log"
  $ uspark watch-claude --dry-run --root ~/src/my-app < session.jsonl
stdout is stdin, unchanged; progress, warnings and the summary go to stderr.`;

/** watch's own flags, then a session's. */
const watchFlags = {
  agent: choiceFlag("--agent <name>", "the agent whose stream this is", ["auto", ...agentNames], "auto"),
  stdin: negatedFlag("--no-stdin", "read no stream: watch the tree and sync until SIGINT/SIGTERM/SIGHUP (a dev container's daemon)"),
  twoWay: switchFlag("--two-way", "also follow the remote and write its changes here (never over a local change)"),
  ...sessionFlags,
};

export type WatchFlags = FlagValues<typeof watchFlags>;

export function addWatchCommand(program: Command): void {
  addFlags(program.command("watch").description("sync the files edited in any supported agent's JSON stream"), watchFlags)
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand(flags));
}

export async function runWatchCommand(flags: SessionFlags): Promise<void> {
  const stdin = flags.stdin !== false;
  const report = reporterFor(flags, undefined, undefined, !stdin);
  const sessionStopped = deferred();
  let started: Started;
  try {
    if (!stdin && !flags.fsWatch) throw new UsageError("--no-stdin with --no-fs-watch would see no change at all", "drop --no-fs-watch");
    // A daemon ends when syncing stops for good (a revoked token): its supervisor must see that.
    started = await startWatcher(flags, stdin ? {} : { onSyncStopped: sessionStopped.resolve, commitAgent: "watch" }, undefined, stdin);
  } catch (error) {
    if (stdin) return pipeUsageFailure(report, error);
    return usageFailure(report, error);
  }
  if (stdin && isatty(0))
    report.warn("tty", "stdin is a terminal: pipe an agent's JSON stream into uspark (Ctrl-D ends), or use --no-stdin");
  const endEarly = sessionStopped.promise.then(() =>
    report.error(
      "daemon",
      "syncing stopped for good (why is said above): the daemon exits rather than idle; start it again once that is fixed",
    ),
  );
  const session = runSession({
    watcher: started.watcher,
    report,
    input: stdin ? agentStdin() : undefined,
    output: process.stdout,
    endEarly: stdin ? undefined : endEarly,
  });
  // Once its signal handlers are in place: a supervisor may stop it as soon as it has read this.
  if (!stdin) reportStart(report, started);
  const end = await session;
  await started.lock?.release();
  exit(end.exitCode);
}

/** A daemon's one start line (unless --quiet): what it watches, where it syncs to, how to stop it. */
function reportStart(report: Reporter, { root, connection }: Started): void {
  const where = connection ? `for project ${connection.projectId} on ${connection.apiUrl}` : "(dry run: nothing is sent)";
  report.info("start", `watching ${root} ${where}, pid ${process.pid}; SIGINT or SIGTERM stops it`, {
    root,
    projectId: connection?.projectId,
    apiUrl: connection?.apiUrl,
    pid: process.pid,
  });
}
