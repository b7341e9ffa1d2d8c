import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type * as Commander from "commander";
import { agentNames } from "./agents/index.js";
import {
  DEFAULT_API_URL,
  loadHomeConfig,
  parseNonNegativeInt,
  parsePositiveInt,
  resolveConnection,
  UsageError,
  type Connection,
} from "./config.js";
import { type LogFormat, Reporter, type Verbosity } from "./report.js";
import { requireCjs } from "./cjs.js";
import { passthrough } from "./stream/passthrough.js";
import { createWatcher, DEFAULTS, type Watcher } from "./watcher.js";

const { Command, CommanderError, Option } = requireCjs("commander") as typeof Commander;
type Command = Commander.Command;

interface LogFlags {
  quiet?: boolean;
  verbose?: boolean;
  logFormat: LogFormat;
}

interface ConnectionOptionFlags {
  projectId?: string;
  apiUrl?: string;
  token?: string;
  insecure?: boolean;
}

interface TreeFlags {
  root: string;
  ignore?: string[];
  prefix?: string;
}

interface WatchFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  agent: string;
  dryRun?: boolean;
  debounce: number;
  maxWait: number;
  flushTimeout: number;
  requestTimeout: number;
  maxFileSize: number;
  concurrency: number;
  fsWatch: boolean;
  poll?: number | true;
  maxLineLength?: number;
  transcript?: boolean;
}

interface PushFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  pending?: boolean;
  delete?: boolean;
  flushTimeout: number;
  requestTimeout: number;
  maxFileSize: number;
  concurrency: number;
}

interface ServeFlags {
  data?: string;
  db?: string;
  port: number;
  host: string;
  token?: string;
  quiet?: boolean;
  verbose?: boolean;
  latency?: number;
}

const EXAMPLES = `
Examples:
  $ claude -p --output-format stream-json --verbose "fix the login bug" | uspark watch-claude --project-id my-app
  $ codex exec --json "add tests" | uspark watch --project-id my-app
  $ uspark watch-claude --dry-run < session.jsonl          # what would be pushed, nothing sent
  $ uspark push --pending --project-id my-app                # retry what an earlier run could not sync
  $ uspark serve --data ./uspark-data                        # a local reference server on port 4400

Settings: --api-url / USPARK_API_URL (default ${DEFAULT_API_URL}), --token / USPARK_TOKEN,
--project-id / USPARK_PROJECT_ID, or ~/.uspark/config.json { "token": "...", "apiUrl": "..." }.
Exit codes: 0 everything synced, 1 something not synced (listed and journaled in
<root>/.uspark/pending.json), 2 usage or configuration error.`;

const WATCH_EXAMPLES = `
Examples:
  $ claude -p --output-format stream-json --verbose "fix the login bug" | uspark watch-claude --project-id my-app
  $ gemini --output-format stream-json -p "add tests" | uspark watch --project-id my-app --ignore "*.log"
  $ uspark watch-claude --dry-run --root ~/src/my-app < session.jsonl
stdout is stdin, unchanged; progress, warnings and the summary go to stderr.`;

export function buildProgram(): Command {
  const program = new Command("uspark")
    .description("Keep a remote uSpark project in sync with the files an AI coding agent edits.\nstdin is copied to stdout unchanged; the tool's own words go to stderr.")
    .version(packageVersion(), "-V, --version")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXAMPLES)
    .exitOverride();

  addWatchOptions(
    program
      .command("watch-claude")
      .description("sync the files edited in a Claude Code stream (claude -p --output-format stream-json --verbose)"),
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand({ ...flags, agent: "claude" }));

  addWatchOptions(
    program
      .command("watch")
      .description("sync the files edited in any supported agent's JSON stream")
      .addOption(new Option("--agent <name>", "the agent whose stream this is").choices(["auto", ...agentNames]).default("auto")),
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand(flags));

  addLogOptions(
    addTreeOptions(
      addConnectionOptions(
        program
          .command("push")
          .description("push files now: the given paths, the journal of an earlier run (--pending), or the whole tree")
          .argument("[paths...]", "files to push (default: every file under the root that is not ignored)")
          .option("--pending", "retry what earlier runs journaled in <root>/.uspark/pending.json")
          .option("--delete", "with no paths: also delete remote files that are missing locally")
          .option("--flush-timeout <ms>", "give up when the server has not answered for this long", int("--flush-timeout"), DEFAULTS.flushTimeoutMs)
          .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
          .option("--max-file-size <bytes>", "skip larger files", int("--max-file-size"), DEFAULTS.maxFileSize)
          .option("--concurrency <n>", "parallel blob uploads", positive("--concurrency"), DEFAULTS.concurrency),
      ),
    ),
  ).action((paths: string[], flags: PushFlags) => runPushCommand(paths, flags));

  program
    .command("serve")
    .description("run the reference project server: the project API, on this machine, for trying uspark out and for tests")
    .option("--data <dir>", "where projects, commits and blobs are stored (a directory)")
    .option("--db <postgres-url>", "keep everything in PostgreSQL instead (env USPARK_DATABASE_URL); replicas may share it")
    .option("--port <port>", "port to listen on (0: any free port)", int("--port"), 4400)
    .option("--host <host>", "address to bind; other than loopback only with --token", "127.0.0.1")
    .option("--token <token>", "require this bearer token on every request")
    .option("--quiet", "print errors only")
    .option("--verbose", "print every request")
    .addOption(new Option("--latency <ms>", "delay every answer (benchmarks)").hideHelp().argParser(int("--latency")))
    .action((flags: ServeFlags) => runServeCommand(flags));

  return program;
}

function addWatchOptions(command: Command): Command {
  return addLogOptions(
    addTreeOptions(
      addConnectionOptions(command)
        .option("--dry-run", "detect and print what would be pushed; send nothing")
        .option("--debounce <ms>", "push after this long without a new change", int("--debounce"), DEFAULTS.debounceMs)
        .option("--max-wait <ms>", "push at the latest this long after a batch's first change", int("--max-wait"), DEFAULTS.maxWaitMs)
        .option("--flush-timeout <ms>", "at the end, wait this long for the last pushes", int("--flush-timeout"), DEFAULTS.flushTimeoutMs)
        .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
        .option("--max-file-size <bytes>", "skip (and report) larger files", int("--max-file-size"), DEFAULTS.maxFileSize)
        .option("--concurrency <n>", "parallel blob uploads", positive("--concurrency"), DEFAULTS.concurrency)
        .option("--no-fs-watch", "do not watch the file system for changes made outside tool events")
        .option("--poll [ms]", "poll the file system (bind mounts in containers where native events never come)", int("--poll"))
        .option("--max-line-length <bytes>", "pass longer lines through without parsing them", positive("--max-line-length"))
        .addOption(transcriptOption()),
    ),
  );
}

/** `--transcript` (watch, watch-claude, run): off by default, transcripts hold prompts and file contents. */
export function transcriptOption(): Commander.Option {
  return new Option("--transcript", "also send the agent's stream, byte for byte, as this session's transcript (it holds prompts and file contents)");
}

function addConnectionOptions(command: Command): Command {
  return command
    .option("--project-id <id>", "the remote project (or USPARK_PROJECT_ID)")
    .option("--api-url <url>", `the project API (or USPARK_API_URL; default ${DEFAULT_API_URL})`)
    .option("--token <token>", "bearer token (or USPARK_TOKEN, or ~/.uspark/config.json)")
    .option("--insecure", "allow plain http:// to a host other than this machine");
}

function addTreeOptions(command: Command): Command {
  return command
    .option("--root <dir>", "the project root; nothing outside it is synced", ".")
    .option("--ignore <glob>", "never sync files matching this gitignore-style pattern (repeatable)", collect)
    .option("--prefix <dir>", "sync only files under <root>/<dir>, stored without that prefix");
}

function addLogOptions(command: Command): Command {
  return command
    .option("-q, --quiet", "print errors only")
    .option("-v, --verbose", "print every detection and request")
    .addOption(new Option("--log-format <format>", "how stderr lines are written").choices(["text", "json"]).default("text"));
}

async function runWatchCommand(flags: WatchFlags): Promise<void> {
  const report = reporterFor(flags);
  let watcher: Watcher;
  try {
    const root = checkRoot(flags.root);
    const connection = flags.dryRun ? undefined : connect(flags);
    watcher = createWatcher({
      root,
      agent: flags.agent,
      ignore: flags.ignore,
      prefix: flags.prefix,
      dryRun: flags.dryRun,
      fsWatch: flags.fsWatch,
      poll: flags.poll === true ? 1000 : flags.poll,
      maxLineLength: flags.maxLineLength,
      report: reporterFor(flags, connection?.token),
      ...connection,
      insecure: flags.insecure,
      debounceMs: flags.debounce,
      maxWaitMs: flags.maxWait,
      flushTimeoutMs: flags.flushTimeout,
      requestTimeoutMs: flags.requestTimeout,
      maxFileSize: flags.maxFileSize,
      concurrency: flags.concurrency,
      transcript: flags.transcript,
    });
  } catch (error) {
    return usageFailure(report, error);
  }
  if (process.stdin.isTTY) report.warn("tty", "stdin is a terminal: pipe an agent's JSON stream into uspark (Ctrl-D ends)");

  const stream = passthrough({
    input: process.stdin,
    output: process.stdout,
    onChunk: (chunk) => watcher.write(chunk),
    onOutputClosed: (error) => report.debug("stdout-closed", `stdout closed (${(error as NodeJS.ErrnoException).code ?? error.message}); still reading stdin and syncing`),
  });

  // The first signal ends the input as stdin's end would; a second one journals and exits at once.
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      report.info("signal", `${signal}: pushing what is pending, then exiting (again to stop at once)`);
      stream.stop();
    } else {
      void watcher.abort().then(() => exit(128 + (signal === "SIGINT" ? 2 : 15)));
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  let summary;
  try {
    // Sync's last flush need not wait for a slow reader of stdout; the exit does.
    await Promise.race([stream.ended, stream.done]);
    [summary] = await Promise.all([watcher.end(), stream.done]);
  } catch (error) {
    report.error("stdin", `reading stdin failed: ${(error as Error).message}`);
    summary = await watcher.end();
  }
  if (signals < 2) exit(summary.exitCode);
}

async function runPushCommand(paths: string[], flags: PushFlags): Promise<void> {
  const report = reporterFor(flags);
  let connection: Connection;
  let root: string;
  try {
    root = checkRoot(flags.root);
    connection = connect(flags);
  } catch (error) {
    return usageFailure(report, error);
  }
  const { runPush } = await import("./push.js");
  const code = await runPush({
    ...connection,
    root,
    paths,
    pending: flags.pending === true,
    delete: flags.delete === true,
    ignore: flags.ignore ?? [],
    prefix: flags.prefix,
    flushTimeoutMs: flags.flushTimeout,
    requestTimeoutMs: flags.requestTimeout,
    maxFileSize: flags.maxFileSize,
    concurrency: flags.concurrency,
    debounceMs: 0,
    maxWaitMs: 0,
    source: { agent: "push" },
    report: reporterFor(flags, connection.token),
  });
  exit(code);
}

async function runServeCommand(flags: ServeFlags): Promise<void> {
  const { runServe } = await import("./server/index.js");
  try {
    const databaseUrl = flags.db ?? (flags.data === undefined ? process.env.USPARK_DATABASE_URL || undefined : undefined);
    if ((flags.data === undefined) === (databaseUrl === undefined)) {
      return usageFailure(new Reporter(), new UsageError("give exactly one of --data <dir> and --db <postgres-url>"));
    }
    await runServe({ dataDir: flags.data === undefined ? undefined : path.resolve(flags.data), databaseUrl, port: flags.port, host: flags.host, token: flags.token, quiet: flags.quiet, verbose: flags.verbose, latencyMs: flags.latency });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EUSAGE") return usageFailure(new Reporter(), new UsageError((error as Error).message));
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      return usageFailure(new Reporter(), new UsageError(`port ${flags.port} is in use`, "choose another with --port, or --port 0 for any free port"));
    }
    throw error;
  }
  exit(0);
}

function connect(flags: ConnectionOptionFlags): Connection {
  return resolveConnection(flags, process.env, loadHomeConfig());
}

function checkRoot(root: string): string {
  const resolved = path.resolve(root);
  let isDirectory = false;
  try {
    isDirectory = statSync(resolved).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) throw new UsageError(`--root ${root} is not a directory`);
  return resolved;
}

function reporterFor(flags: LogFlags, token?: string): Reporter {
  const verbosity: Verbosity = flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal";
  return new Reporter({ format: flags.logFormat, verbosity, secrets: token ? [token] : [] });
}

function usageFailure(report: Reporter, error: unknown): void {
  if (!(error instanceof UsageError)) throw error;
  report.error("usage", error.hint ? `${error.message} (${error.hint})` : error.message);
  exit(2);
}

function int(name: string) {
  return (raw: string) => parseNonNegativeInt(name, raw);
}

function positive(name: string) {
  return (raw: string) => parsePositiveInt(name, raw);
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

/** Exit once stderr has taken our last words; stdout was drained before we got here. */
function exit(code: number): void {
  process.exitCode = code;
  process.stderr.write("", () => process.exit(code));
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; everything else commander rejects is a usage error.
      exit(error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2);
      return;
    }
    if (error instanceof UsageError) return usageFailure(new Reporter(), error);
    process.stderr.write(`uspark: internal error: ${(error as Error).stack ?? String(error)}\n`);
    exit(70);
  }
}
