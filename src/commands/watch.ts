import { isatty } from "node:tty";
import { agentNames } from "../agents/index.js";
import { runSession } from "../lifecycle/session.js";
import { UsageError } from "../config.js";
import type { Reporter } from "../report.js";
import { agentStdin } from "../stream/stdin.js";
import { deferred } from "../deferred.js";
import { DEFAULTS } from "../watcher.js";
import { Option, type Command } from "../cli/commander.js";
import { reporterFor } from "../cli/connection.js";
import { exit, pipeUsageFailure, usageFailure } from "../cli/exit.js";
import type { WatchFlags } from "../cli/flags.js";
import { addConnectionOptions, addLogOptions, addTreeOptions, flushTimeoutAlias, int, positive, timeoutOption } from "../cli/options.js";
import { startWatcher, type Started } from "../cli/watcher-start.js";

// `uspark watch`: the files an agent's JSON stream on stdin edits, synced while it runs (or, with
// --no-stdin, a daemon syncing the tree).

export const WATCH_EXAMPLES = `
Examples:
  $ claude -p --output-format stream-json --verbose "fix the login bug" | uspark watch-claude --project-id my-app
  $ gemini --output-format stream-json -p "add tests" | uspark watch --project-id my-app --ignore "*.log"
  $ uspark watch-claude --dry-run --root ~/src/my-app < session.jsonl
stdout is stdin, unchanged; progress, warnings and the summary go to stderr.`;

export function addWatchCommand(program: Command): void {
  addWatchOptions(
    program
      .command("watch")
      .description("sync the files edited in any supported agent's JSON stream")
      .addOption(new Option("--agent <name>", "the agent whose stream this is").choices(["auto", ...agentNames]).default("auto"))
      .option("--no-stdin", "read no stream: watch the tree and sync until SIGINT/SIGTERM/SIGHUP (a dev container's daemon)")
      .option("--two-way", "also follow the remote and write its changes here (never over a local change)"),
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand(flags));
}

export function addWatchOptions(command: Command): Command {
  return addLogOptions(
    addTreeOptions(
      addConnectionOptions(command)
        .option("--dry-run", "detect and print what would be pushed; send nothing")
        .option("--debounce <ms>", "push after this long without a new change", int("--debounce"), DEFAULTS.debounceMs)
        .option("--max-wait <ms>", "push at the latest this long after a batch's first change", int("--max-wait"), DEFAULTS.maxWaitMs)
        .addOption(timeoutOption("at the end, wait this long for the last pushes (and give up on a server silent for this long)"))
        .addOption(flushTimeoutAlias())
        .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
        .option("--max-file-size <bytes>", "skip (and report) larger files", int("--max-file-size"), DEFAULTS.maxFileSize)
        .option("--concurrency <n>", "parallel blob uploads", positive("--concurrency"), DEFAULTS.concurrency)
        .option("--no-fs-watch", "do not watch the file system for changes made outside tool events")
        .option("--poll [ms]", "poll the file system (bind mounts in containers where native events never come)", int("--poll"))
        .option("--rescan <ms>", "compare the whole tree with what was synced this often (0: only at start and end)", int("--rescan"), DEFAULTS.rescanMs)
        .option("--max-line-length <bytes>", "pass longer lines through without parsing them", positive("--max-line-length"))
        .addOption(transcriptOption()),
    ),
  );
}

/** `--transcript` (watch, watch-claude, run): off by default, transcripts hold prompts and file contents. */
function transcriptOption(): Option {
  return new Option("--transcript", "also send the agent's stream, byte for byte, as this session's transcript (it holds prompts and file contents)");
}

export async function runWatchCommand(flags: WatchFlags): Promise<void> {
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
  if (stdin && isatty(0)) report.warn("tty", "stdin is a terminal: pipe an agent's JSON stream into uspark (Ctrl-D ends), or use --no-stdin");
  const endEarly = sessionStopped.promise.then(() => report.error("daemon", "syncing stopped for good (why is said above): the daemon exits rather than idle; start it again once that is fixed"));
  const session = runSession({ watcher: started.watcher, report, input: stdin ? agentStdin() : undefined, output: process.stdout, endEarly: stdin ? undefined : endEarly });
  // Once its signal handlers are in place: a supervisor may stop it as soon as it has read this.
  if (!stdin) reportStart(report, started);
  const end = await session;
  await started.lock?.release();
  exit(end.exitCode);
}

/** A daemon's one start line (unless --quiet): what it watches, where it syncs to, how to stop it. */
function reportStart(report: Reporter, { root, connection }: Started): void {
  const where = connection ? `for project ${connection.projectId} on ${connection.apiUrl}` : "(dry run: nothing is sent)";
  report.info("start", `watching ${root} ${where}, pid ${process.pid}; SIGINT or SIGTERM stops it`, { root, projectId: connection?.projectId, apiUrl: connection?.apiUrl, pid: process.pid });
}
