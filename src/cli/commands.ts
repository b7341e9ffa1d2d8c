import { statSync } from "node:fs";
import path from "node:path";
import { isatty } from "node:tty";
import { checkPrefix, defaultServeData, givenApiUrl, homeConfigPath, isChosenServer, knownServersPath, loadHomeConfig, loadKnownServers, recordKnownServer, resolveConnection, resolvePrefix, resolveServer, UsageError, type Connection, type ConnectionFlags, type HomeConfig, type MissingProjectHint } from "../config/config.js";
import { EXIT } from "../util/exit-codes.js";
import { ownLogIgnores } from "../ignore/own-log.js";
import { agentForCommand, commandName, missingStreamFlags, printsNoFileEvents } from "../agents/commands.js";
import { runSession } from "../lifecycle/session.js";
import { colorWanted, Reporter, stderrFailure, stderrOutput, type ReporterOptions, type ReportRecord, type Verbosity } from "../report/reporter.js";
import { RootLockHeld, StateDirError, takeRootLock, type RootLock } from "../state/state-dir.js";
import { passthroughOf } from "../stream/early-copy.js";
import { agentStdin } from "../stream/stdin.js";
import { createWatcher, type Watcher, type WatcherOptions } from "../watcher/watcher.js";
import { timeoutOf, type ConnectionOptionFlags, type DiffFlags, type HistoryFlags, type InspectFlags, type LogFlags, type ProjectsFlags, type PullFlags, type PushFlags, type ResolveFlags, type RunFlags, type ServeFlags, type StatusFlags, type StoreFlags, type TreeFlags, type WatchFlags } from "./flags.js";
import { ApiClient, ApiError } from "../transfer/client.js";
import { listProjects } from "../transfer/projects.js";
import { validateProjectId } from "../api/validate.js";
import { rememberedProject } from "../reconcile/state-store.js";
import { deferred } from "../util/deferred.js";
import { findRoot } from "../reconcile/root.js";

/**
 * What each command does with its parsed flags: check the root and the connection (a bad one is
 * one usage line and exit 2), load the command's module, run it, and exit with its code.
 */

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
    started = await startWatcher({ ...flags, agent }, { warnNoJson: missing === undefined, listener: view?.listener, commitAgent: "run" }, lock);
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
    report.warn("stream-flag", `${commandName(command!)} was started without ${missing}: its tool events cannot be read, only the file watcher syncs (uspark never changes the agent's arguments)`);
  }
  if (printsNoFileEvents(command!)) noFileEventsNotice(report, commandName(command!), flags.fsWatch);
  const { runAgent } = await import("../lifecycle/agent-process.js");
  const code = await runAgent({ command: command!, args, watcher: started.watcher, report, exitGraceMs: flags.exitGrace, view: view?.view, format: agent });
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
  const { RunView, runViewWanted } = await import("../lifecycle/run-view.js");
  if (!runViewWanted(flags.raw, process.stdout.isTTY)) return undefined;
  const view = new RunView({ terminal: process.stdout, format: agent, root: rootOf(flags), color: colorWanted(true) });
  return { view, listener: (record: ReportRecord) => view.report(record) && process.stderr.isTTY === true };
}

interface Started {
  watcher: Watcher;
  root: string;
  /** Undefined in a dry run. */
  connection: Connection | undefined;
  /** The root's watcher lock; none in a dry run, which sends nothing. */
  lock: RootLock | undefined;
}

/**
 * The root's lock (unless given, or a dry run), then the watcher; throws a UsageError for bad flags
 * or a held lock. `mayShare` (the pipe form): beside a live uspark holding the lock, see lockRoot.
 */
async function startWatcher(flags: WatchFlags, extra: WatcherExtras, heldLock?: SessionLock, mayShare = false): Promise<Started> {
  const root = rootOf(flags);
  const { connection, prefix } = flags.dryRun ? { connection: undefined, prefix: flags.prefix } : await connect(flags, root, { dryRunNeedsNone: true });
  checkPrefix(root, prefix);
  const lock = heldLock ?? (flags.dryRun ? undefined : await lockRoot(root, flags, mayShare));
  // Beside: the other uspark's file watcher sees the tree and its two-way watch writes it.
  const beside = lock === "beside";
  const own = beside ? { ...flags, prefix, fsWatch: false, twoWay: false } : { ...flags, prefix };
  try {
    return { watcher: watcherFor(own, root, connection, { ...extra, watchedBeside: beside }), root, connection, lock: beside ? undefined : lock };
  } catch (error) {
    if (!heldLock) await release(lock);
    throw error;
  }
}

/** The root's lock, or "beside": a session that runs beside the live uspark holding it. */
type SessionLock = RootLock | "beside";

/**
 * The root's lock. With `mayShare` (the pipe form, run), a live uspark holding it (the daemon of
 * the dev-container recipe) is no error: the session runs beside it, with no lock and no file
 * watcher of its own, syncing what its agent's events name through conditional commits and the
 * transactional state file, as two pushes at once do (docs/sync.md, Many writers); said in one line.
 */
async function lockRoot(root: string, flags: LogFlags, mayShare: boolean): Promise<SessionLock> {
  const report = reporterFor(flags);
  try {
    return await takeRootLock(root, (why) => report.info("lock", why));
  } catch (error) {
    if (!mayShare || !(error instanceof RootLockHeld)) return lockFailure(error);
    const line = `beside the uspark (pid ${error.pid}) that watches ${root}: this session syncs what its agent's events name, with no file watcher of its own (that uspark's sees the rest)`;
    report.info("beside", line, { pid: error.pid, root });
    return "beside";
  }
}

async function release(lock: SessionLock | undefined): Promise<void> {
  if (lock !== "beside") await lock?.release();
}

/** What a command adds to a watcher's options: a warning's switch, the daemon's stop, the run view's listener. */
type WatcherExtras = Pick<WatcherOptions, "warnNoJson" | "onSyncStopped" | "commitAgent" | "watchedBeside"> & { listener?: ReporterOptions["listener"] };

/** A live watcher of the same root is a configuration error (exit 2); anything else goes on up. */
function lockFailure(error: unknown): never {
  if (error instanceof RootLockHeld) throw new UsageError(error.message, `stop it first, or watch another --root (a lock whose process is gone is taken over)`);
  if (error instanceof StateDirError) throw new UsageError(error.message);
  throw error;
}

/** A daemon's one start line (unless --quiet): what it watches, where it syncs to, how to stop it. */
function reportStart(report: Reporter, { root, connection }: Started): void {
  const where = connection ? `for project ${connection.projectId} on ${connection.apiUrl}` : "(dry run: nothing is sent)";
  report.info("start", `watching ${root} ${where}, pid ${process.pid}; SIGINT or SIGTERM stops it`, { root, projectId: connection?.projectId, apiUrl: connection?.apiUrl, pid: process.pid });
}

/** Said once, before the agent starts: where its changes will be seen, since its output names none. */
function noFileEventsNotice(report: Reporter, name: string, fsWatch: boolean): void {
  if (fsWatch) report.info("agent", `${name}'s output carries no file events: the file watcher syncs its changes`, { agent: name });
  else report.warn("agent", `${name}'s output carries no file events and the file watcher is off (--no-fs-watch): only the final scan syncs its changes`, { agent: name });
}

async function pullBeforeRun(flags: RunFlags): Promise<number> {
  // What `uspark pull` would do with the same flags (a dry run pulls nothing), never --force or --delete.
  const code = await pull(flags);
  if (code !== EXIT.ok) reporterFor(flags).error("run", "the pull did not complete cleanly; the agent was not started (resolve the conflicts, or pull with --force)");
  return code;
}

/** A watcher from the command line's flags; throws a UsageError for bad ones. */
function watcherFor(flags: WatchFlags, root: string, connection: Connection | undefined, { listener, ...extra }: WatcherExtras): Watcher {
  const report = reporterFor(flags, connection?.token, listener, flags.stdin === false);
  // Its own log inside the tree would be committed after each line it writes, in a loop.
  const ownLogs = ownLogIgnores(root, (rel, stream) => report.info("ignore", `not syncing ${rel}: it is this process's own log (its ${stream})`, { path: rel }));
  return createWatcher({
    root,
    agent: flags.agent,
    ignore: ownLogs.length > 0 ? [...(flags.ignore ?? []), ...ownLogs] : flags.ignore,
    prefix: flags.prefix,
    dryRun: flags.dryRun,
    fsWatch: flags.fsWatch,
    poll: flags.poll === true ? 1000 : flags.poll,
    maxLineLength: flags.maxLineLength,
    report,
    ...connection,
    insecure: flags.insecure,
    debounceMs: flags.debounce,
    maxWaitMs: flags.maxWait,
    flushTimeoutMs: timeoutOf(flags),
    requestTimeoutMs: flags.requestTimeout,
    maxFileSize: flags.maxFileSize,
    concurrency: flags.concurrency,
    rescanMs: flags.rescan,
    transcript: flags.transcript,
    twoWay: flags.twoWay === true,
    create: flags.create === true,
    ...extra,
  });
}

export async function runPushCommand(paths: string[], flags: PushFlags): Promise<void> {
  const target = await rootAndConnection(flags, { prefixMustExist: true });
  if (!target) return;
  const { root, connection, prefix } = target;
  const { runPush } = await import("../lifecycle/push.js");
  const code = await runPush({
    ...connection,
    root,
    paths,
    pending: flags.pending === true,
    force: flags.force === true,
    dryRun: flags.dryRun === true,
    ontoRewound: flags.ontoRewound === true,
    ignore: flags.ignore ?? [],
    prefix,
    flushTimeoutMs: timeoutOf(flags),
    requestTimeoutMs: flags.requestTimeout,
    maxFileSize: flags.maxFileSize,
    concurrency: flags.concurrency,
    create: flags.create === true,
    source: { agent: "push" },
    report: reporterFor(flags, connection.token),
  });
  exit(code);
}

export async function runPullCommand(paths: string[], flags: PullFlags): Promise<void> {
  exit(await pull(flags, paths));
}

async function pull(flags: PullFlags, paths: string[] = []): Promise<number> {
  const target = await rootAndConnection(flags, { prefixMustExist: false });
  if (!target) return EXIT.usage;
  const { root, connection, prefix } = target;
  const { runPull } = await import("../lifecycle/pull.js");
  return runPull({
    ...connection,
    root,
    ignore: flags.ignore ?? [],
    prefix,
    paths,
    force: flags.force === true,
    dryRun: flags.dryRun === true,
    create: flags.create === true,
    giveUpAfterMs: timeoutOf(flags),
    requestTimeoutMs: flags.requestTimeout,
    concurrency: flags.concurrency,
    report: reporterFor(flags, connection.token),
  });
}

export async function runResolveCommand(path: string, flags: ResolveFlags): Promise<void> {
  exit(await resolve(flags, path));
}

async function resolve(flags: ResolveFlags, path: string): Promise<number> {
  const report = reporterFor(flags);
  const choices = (["mine", "theirs", "both"] as const).filter((c) => flags[c] === true);
  if (choices.length > 1) {
    report.error("usage", `choose one of --mine, --theirs, --both (got --${choices.join(", --")})`);
    return EXIT.usage;
  }
  const target = await rootAndConnection(flags, { prefixMustExist: false });
  if (!target) return EXIT.usage;
  const { root, connection, prefix } = target;
  const { runResolve } = await import("../lifecycle/resolve.js");
  return runResolve({ ...connection, root, ignore: flags.ignore ?? [], prefix, path, choice: choices[0], giveUpAfterMs: flags.timeout, requestTimeoutMs: flags.requestTimeout, report: reporterFor(flags, connection.token) });
}

/** The workspace options of status, diff, log, ls, cat and restore; undefined after a usage error was said. */
async function inspectOptions(flags: InspectFlags) {
  const target = await rootAndConnection(flags, { prefixMustExist: false });
  if (!target) return undefined;
  const { root, connection, prefix } = target;
  return { ...connection, root, ignore: flags.ignore, prefix, create: false, giveUpAfterMs: flags.timeout, requestTimeoutMs: flags.requestTimeout, report: reporterFor(flags, connection.token) };
}

/** One of the commands whose answer goes to stdout; exit 74 when writing it failed (a closed pipe is no failure). */
async function runInspection(flags: InspectFlags, run: (options: NonNullable<Awaited<ReturnType<typeof inspectOptions>>>) => Promise<number>): Promise<void> {
  const options = await inspectOptions(flags);
  if (!options) return;
  const code = await run(options);
  const { stdoutFailed } = await import("../lifecycle/output.js");
  exit(stdoutFailed() ? EXIT.outputError : code);
}

export function runStatusCommand(flags: StatusFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/status.js")).runStatus({ ...o, json: flags.json === true, short: flags.short === true }));
}

export function runDiffCommand(paths: string[], flags: DiffFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/diff.js")).runDiff({ ...o, paths, remote: flags.remote === true }));
}

export function runLogCommand(path: string | undefined, flags: HistoryFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runLog({ ...o, path, limit: flags.n ?? 20, json: flags.json === true }));
}

export function runLsCommand(flags: HistoryFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runLs({ ...o, at: flags.at }));
}

export function runCatCommand(path: string, flags: HistoryFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runCat({ ...o, path, at: flags.at }));
}

export function runRestoreCommand(paths: string[], flags: HistoryFlags & { at: number }): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/restore.js")).runRestore({ ...o, paths, at: flags.at }));
}

/** `uspark projects`: needs no project id; the list goes to stdout. */
export async function runProjectsCommand(flags: ProjectsFlags): Promise<void> {
  await withClient(flags, "projects", async (client, report) => listProjects(client, process.stdout, flags.json === true, (line) => report.info("projects", line)));
}

/** `uspark projects create <id>`: exit 0 when made, 1 when it already exists. */
export async function runProjectsCreateCommand(id: string, flags: ProjectsFlags): Promise<void> {
  const badId = validateProjectId(id);
  if (badId) return usageFailure(reporterFor(flags), new UsageError(`project id ${JSON.stringify(id)}: ${badId}`));
  await withClient({ ...flags, projectId: id }, "projects", async (client, report) => {
    const outcome = await client.createProject(id);
    if (outcome === "exists") {
      report.error("project", `project ${id} already exists`, { projectId: id });
      return EXIT.notSynced;
    }
    report.info("project", `created project ${id}`, { projectId: id });
    return EXIT.ok;
  });
}

/** A client for the project routes (no project id needed), closed after `work`; its failures said plainly. */
async function withClient(flags: ProjectsFlags, what: string, work: (client: ApiClient, report: Reporter) => Promise<number | void>): Promise<void> {
  let client: ApiClient;
  let report = reporterFor(flags);
  try {
    const home = homeConfig(report);
    const server = resolveServer(flags, process.env, home, await rememberedProject(findRoot(process.cwd(), process.env.HOME)));
    rememberChoice(flags, server.apiUrl, home, report);
    report = reporterFor(flags, server.token);
    client = new ApiClient({ ...server, projectId: flags.projectId ?? "", requestTimeoutMs: 30_000 });
  } catch (error) {
    return usageFailure(report, error);
  }
  try {
    exit((await work(client, report)) ?? EXIT.ok);
  } catch (error) {
    const unsupported = error instanceof ApiError && error.code === "unsupported";
    report.error(what, unsupported ? "this server does not list or create projects (it speaks an API older than 1.2; it creates a project on its first commit)" : (error as Error).message);
    exit(unsupported ? EXIT.usage : EXIT.notSynced);
  } finally {
    await client.close();
  }
}

/**
 * The store `--data` or `--db` (or USPARK_DATABASE_URL) names, at most one; with neither, the
 * default directory (`uspark serve` and `uspark serve token` alike: a first try needs no flag).
 */
export function storeOf(flags: StoreFlags): { dataDir?: string; databaseUrl?: string; defaultStore?: true } {
  const databaseUrl = flags.db ?? (flags.data === undefined ? process.env.USPARK_DATABASE_URL || undefined : undefined);
  if (flags.data !== undefined && databaseUrl !== undefined) throw new UsageError("give one of --data <dir> and --db <postgres-url>, not both");
  if (databaseUrl !== undefined) return { databaseUrl };
  if (flags.data !== undefined) return { dataDir: path.resolve(flags.data) };
  return { dataDir: defaultServeData(), defaultStore: true };
}

export async function runServeCommand(flags: ServeFlags): Promise<void> {
  const { runServe } = await import("../server/index.js");
  try {
    // The environment keeps the admin token out of `ps`.
    const token = flags.token ?? (process.env.USPARK_SERVE_TOKEN || undefined);
    await runServe({ ...storeOf(flags), port: flags.port, host: flags.host, publicUrl: flags.publicUrl, allowedHosts: flags.allowedHost, token, quiet: flags.quiet, verbose: flags.verbose, maxBlobBytes: flags.maxBlobBytes, latencyMs: flags.latency });
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(new Reporter(), error);
    if ((error as NodeJS.ErrnoException).code === "EUSAGE") return usageFailure(new Reporter(), new UsageError((error as Error).message));
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      return usageFailure(new Reporter(), new UsageError(`port ${flags.port} is in use`, "choose another with --port, or --port 0 for any free port"));
    }
    throw error;
  }
  exit(0);
}

/** Text for the user's shell on stdout (`uspark completion`): a failed write is exit 74 (EXIT.outputError), a closed pipe is not. */
export async function printToStdout(text: string): Promise<void> {
  const failure = await new Promise<Error | null | undefined>((resolve) => {
    process.stdout.once("error", resolve);
    process.stdout.write(text, resolve);
  });
  if (!failure || (failure as NodeJS.ErrnoException).code === "EPIPE") return exit(EXIT.ok);
  new Reporter().error("output", `writing stdout failed: ${failure.message}`);
  exit(EXIT.outputError);
}

/** The checked root, connection settings and prefix; undefined after a usage error was reported. */
async function rootAndConnection(
  flags: LogFlags & ConnectionOptionFlags & TreeFlags,
  options: { prefixMustExist: boolean },
): Promise<{ root: string; connection: Connection; prefix: string | undefined } | undefined> {
  try {
    const root = rootOf(flags);
    const { connection, prefix } = await connect(flags, root);
    // push reads under the prefix (a typo there would delete the whole remote); pull creates it.
    if (options.prefixMustExist) checkPrefix(root, prefix);
    return { root, connection, prefix };
  } catch (error) {
    usageFailure(reporterFor(flags), error);
    return undefined;
  }
}

/** Flags, then the environment, then what the root remembers of its last sync, then ~/.uspark/config.json. */
async function connect(
  flags: LogFlags & ConnectionOptionFlags & Pick<TreeFlags, "prefix">,
  root: string,
  missing: MissingProjectHint = {},
): Promise<{ connection: Connection; prefix: string | undefined }> {
  const remembered = await rememberedProject(root);
  const report = reporterFor(flags);
  const home = homeConfig(report);
  const connection = resolveConnection(flags, process.env, home, remembered, missing);
  rememberChoice(flags, connection.apiUrl, home, report);
  return { connection, prefix: resolvePrefix(flags.prefix, connection, remembered) };
}

/** --root, else the nearest ancestor the tool synced before (as git finds its work tree), else here. */
function rootOf(flags: Pick<TreeFlags, "root">): string {
  return checkRoot(flags.root ?? findRoot(process.cwd(), process.env.HOME));
}

/** Paths are resolved against the current directory: one that was deleted under us is a usage error, not a crash. */
export function checkWorkingDirectory(): void {
  try {
    process.cwd();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new UsageError("the current directory no longer exists (it was deleted or replaced)", "cd into the project again, e.g. cd \"$PWD\"");
  }
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

/** ~/.uspark/config.json (its mode and unknown keys said once each through `report`) and the servers recorded beside it. */
export function homeConfig(report: Reporter): HomeConfig {
  const file = homeConfigPath();
  const warn = (message: string) => report.warnOnce(message, "config", message);
  return { ...loadHomeConfig(file, warn), knownServers: loadKnownServers(knownServersPath(file), warn) };
}

/**
 * A server named by --api-url or USPARK_API_URL is this user's choice: recorded (known-servers),
 * so that the tree pulled from it needs no flag from then on. `apiUrl` is the checked one.
 */
export function rememberChoice(flags: Pick<ConnectionFlags, "apiUrl">, apiUrl: string, home: HomeConfig, report: Reporter): void {
  if (givenApiUrl(flags, process.env) === undefined || isChosenServer(apiUrl, home)) return;
  const file = knownServersPath();
  try {
    recordKnownServer(file, apiUrl);
  } catch (error) {
    report.warn("config", `cannot record ${apiUrl} in ${file} (${(error as Error).message}): in a tree pulled from it, pass --api-url again`);
  }
}

/** `timestamps`: a daemon's lines (`watch --no-stdin`), read later in a supervisor's log, carry their time. */
export function reporterFor(flags: LogFlags, token?: string, listener?: ReporterOptions["listener"], timestamps = false): Reporter {
  const verbosity: Verbosity = flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal";
  return new Reporter({ format: flags.logFormat, verbosity, secrets: token ? [token] : [], listener, timestamps });
}

export function usageFailure(report: Reporter, error: unknown): void {
  if (!(error instanceof UsageError)) throw error;
  report.error("usage", error.hint ? `${error.message} (${error.hint})` : error.message);
  exit(EXIT.usage);
}

/**
 * A usage or configuration error in the pipe form (`agent | uspark watch`): said at once, then
 * stdin is still copied to stdout to its end before exit 2, so that the agent upstream is not
 * killed by SIGPIPE and none of its output is lost. A terminal on stdin is not waited for.
 */
export async function pipeUsageFailure(report: Reporter, error: unknown): Promise<void> {
  if (!(error instanceof UsageError)) throw error;
  report.error("usage", error.hint ? `${error.message} (${error.hint})` : error.message);
  await copyStdinThrough();
  exit(EXIT.usage);
}

/** Stdin to stdout to the end (a closed stdout is no reason to stop reading); nothing else. */
export async function copyStdinThrough(): Promise<void> {
  if (isatty(0)) return;
  await passthroughOf({ input: agentStdin(), output: process.stdout, onChunk: () => {}, onOutputError: () => {} }).done.catch(() => undefined);
}

/**
 * Exit once stderr has taken our last words; stdout was drained before we got here. A failed
 * stderr (not EPIPE) makes a clean exit code an output error: words were lost.
 */
export function exit(code: number): void {
  const final = code === EXIT.ok && stderrFailure() ? EXIT.outputError : code;
  process.exitCode = final;
  if (stderrOutput().state !== "open") process.exit(final);
  else process.stderr.write("", () => process.exit(final));
}
