import path from "node:path";
import { AGENTS, agentNames } from "./agents/index.js";
import { createAutoParser } from "./agents/detect.js";
import type { AgentParser, FileChange } from "./agents/types.js";
import { checkApiUrl, DEFAULT_API_URL, requireProjectId, UsageError } from "./config.js";
import type { FsWatcher } from "./fswatch.js";
import { nodeCrypto } from "./lazy-builtins.js";
import { createPathPolicy, type PathDecision } from "./paths.js";
import { Reporter, reportNotSynced } from "./report.js";
import { DEFAULT_MAX_LINE_LENGTH, LineSplitter } from "./stream/lines.js";
import { JsonSniffer } from "./stream/json-sniffer.js";
import { streamCommandFor } from "./agents/commands.js";
import type { ScanLoop } from "./sync/scan-loop.js";
import type { SyncResult, SyncSession } from "./sync/index.js";
import { allSynced } from "./sync/outcome.js";
import { createTranscript, type Transcript, type TranscriptResult } from "./transcript/recorder.js";

/**
 * The watcher without its pipes: feed it an agent's stream (raw bytes, or parsed messages from
 * the Claude Agent SDK) and it detects the files the agent changed and keeps the remote
 * project in sync. `uspark watch` wraps it around stdin and stdout.
 */
export interface WatcherOptions {
  /** The project root; nothing outside it is synced. Default: the current directory. */
  root?: string;
  /** The agent whose stream this is, or "auto" to decide from the first events. Default "auto". */
  agent?: string;
  /** More gitignore-style patterns never to sync. */
  ignore?: readonly string[];
  /** Sync only files under this directory of the root, and strip it remotely. */
  prefix?: string;
  /** Detect and report, but push nothing (no API settings needed). */
  dryRun?: boolean;
  /** Also watch the file system for changes no tool event announces. Default true. */
  fsWatch?: boolean;
  /** Poll the file system every this many ms instead of using native events. */
  poll?: number;
  maxLineLength?: number;
  report?: Reporter;
  /** The project API; default http://127.0.0.1:4400. Plain http only to loopback, unless `insecure`. */
  apiUrl?: string;
  projectId?: string;
  token?: string;
  insecure?: boolean;
  debounceMs?: number;
  maxWaitMs?: number;
  flushTimeoutMs?: number;
  requestTimeoutMs?: number;
  maxFileSize?: number;
  concurrency?: number;
  /**
   * Compare the tree with the base every this many ms (0: never; the scans at start, when the file
   * watcher is ready and at the end always run). Without the file watcher: none. Default 30000.
   */
  rescanMs?: number;
  /** Where relative paths of a stream that reports no working directory are resolved. Default: the current directory. */
  agentCwd?: string;
  /** Also send the stream's exact bytes to the server as this session's transcript (not in a dry run). */
  transcript?: boolean;
  /** Also follow the remote and write its changes here (a two-way watch). */
  twoWay?: boolean;
  /** Create the project if the server does not have it. */
  create?: boolean;
  /**
   * Warn once when the stream's first lines hold no JSON event (the agent was started without its
   * stream flag). Default true; `uspark run` turns it off when it named the missing flag already.
   */
  warnNoJson?: boolean;
  /** Syncing stopped for good (401, 403, an unknown project): nothing more will be sent this session. */
  onSyncStopped?: (reason: string) => void;
}

export interface WatchSummary {
  /** The agent format in use (undefined when auto-detection found none). */
  agent: string | undefined;
  /** Changes accepted by the path policy (tool events and file system). */
  detected: number;
  /** Distinct paths refused by the path policy. */
  refused: number;
  /** In-root files the API cannot represent (the end scan's findings): not synced, exit code 1. */
  unrepresentable: { remote: string; reason: string }[];
  /** The flush timeout cut the last scan of the tree short: not everything is known to be synced (exit code 1). */
  scanCutShort?: boolean;
  /** What the sync did; absent in a dry run. */
  sync?: SyncResult;
  /** What became of the transcript, with `transcript: true`. */
  transcript?: TranscriptResult;
  /** 0: everything synced; 1: something was not (it is journaled); 2: the project does not exist. */
  exitCode: 0 | 1 | 2;
}

export interface Watcher {
  /**
   * Raw bytes of the agent's stream, in order, chunked any way; a chunk is only read during the
   * call. A promise asks the caller to write no more until it settles: the transcript's spool
   * is behind (it gives up past a hard limit when not waited for).
   */
  write(chunk: Buffer | string): void | Promise<void>;
  /** One parsed event, as the Claude Agent SDK yields them. */
  message(event: unknown): void;
  /** End of input: flush at once, wait up to the flush timeout, journal what is left. */
  end(): Promise<WatchSummary>;
  /** Stop now: journal whatever is pending without waiting for the server. */
  abort(): Promise<WatchSummary>;
}

export const DEFAULTS = {
  debounceMs: 300,
  maxWaitMs: 2000,
  flushTimeoutMs: 60_000,
  requestTimeoutMs: 30_000,
  maxFileSize: 50 * 1024 * 1024,
  concurrency: 4,
  rescanMs: 30_000,
  /** `uspark run`: how long the agent's stdout may stay open after it exited. */
  exitGraceMs: 3000,
} as const;

export function createWatcher(options: WatcherOptions = {}): Watcher {
  const report = options.report ?? new Reporter();
  const agentName = options.agent ?? "auto";
  if (agentName !== "auto" && !Object.hasOwn(AGENTS, agentName)) {
    throw new UsageError(`unknown agent ${JSON.stringify(agentName)}`, `choose one of: auto, ${agentNames.join(", ")}`);
  }
  const projectId = options.dryRun ? "" : requireProjectId(options.projectId);
  const apiUrl = checkApiUrl(options.apiUrl ?? DEFAULT_API_URL, options.insecure === true);
  const policy = createPathPolicy({ root: options.root ?? process.cwd(), ignore: options.ignore, prefix: options.prefix });
  // The session id is made when a commit or the transcript first needs it: a dry run never does,
  // and node:crypto, loaded for it alone, cost a dry run's start some 7 M instructions.
  let sessionId: string | undefined;
  const source = {
    agent: agentName === "auto" ? "unknown" : agentName,
    get sessionId() {
      return (sessionId ??= nodeCrypto().randomUUID());
    },
  };
  const refusedPaths = new Set<string>();
  const dryRunPaths = new Set<string>();
  let detected = 0;
  // A relative path in a stream that names no working directory is the agent's, and the agent
  // runs where we were started (a shell pipe, or `uspark run`), which need not be --root.
  const agentCwd = options.agentCwd ?? process.cwd();

  // Accepted paths are remembered: resolving symlinks costs more than all the parsing of a
  // session, and a path that turns bad later is still refused by the sync's read, which checks
  // the real path of the descriptor it opened. Rules that changed (a .gitignore, whoever noticed
  // it) make every remembered decision stale: they are all forgotten.
  const accepted = new Map<string, PathDecision>();
  policy.ignore.onRulesChanged(() => accepted.clear());
  const resolvePath = (change: FileChange): PathDecision => {
    const key = `${change.cwd ?? ""}\0${change.path}`;
    const known = accepted.get(key);
    if (known) return known;
    const decision = policy.resolve(change.path, change.cwd ?? agentCwd);
    if (decision.ok) accepted.set(key, decision);
    return decision;
  };

  const onChange = (change: FileChange): void => {
    const decision = resolvePath(change);
    if (!decision.ok) {
      const fields = { path: change.path, cause: change.cause };
      if (decision.severity === "skip") return report.debug("skipped", decision.reason, fields);
      if (decision.severity === "notice") return report.info("skipped", decision.reason, fields);
      // The path as written (not normalised): two spellings of one file are two agent mistakes.
      const key = path.isAbsolute(change.path) ? change.path : `${change.cwd ?? agentCwd}/${change.path}`;
      refusedPaths.add(key);
      return report.warnOnce(key, "refused", decision.reason, fields);
    }
    detected++;
    const fields = { path: decision.remote, cause: change.cause, kind: change.kind, confirmed: change.confirmed };
    if (options.dryRun) {
      dryRunPaths.add(decision.remote);
      const note = change.confirmed ? "" : ", unconfirmed: checked by hash";
      const line = `would ${change.kind === "delete" ? "delete" : "push"} ${decision.remote} (${change.cause}${note})`;
      report.infoOnce(line, "change", line, fields);
      return;
    }
    report.debug("change", `detected ${decision.remote} (${change.cause})`, fields);
    void sync!.then((session) => session.add({ remote: decision.remote, cause: change.cause }));
  };

  const parser: AgentParser =
    agentName === "auto"
      ? createAutoParser(onChange, (format) => {
          if (format) {
            source.agent = format.name;
            report.debug("agent", `detected the ${format.name} stream format`, { agent: format.name });
          } else if (options.fsWatch === false) {
            report.warn("agent", "no known agent format in this stream, and the file system watcher is off (--no-fs-watch): no change will be seen");
          } else {
            report.debug("agent", "no known agent format in this stream; relying on the file system watcher");
          }
        })
      : AGENTS[agentName]!.create(onChange);

  // Only the first lines are looked at; then it is dropped and costs nothing more.
  let sniffer: JsonSniffer | undefined =
    options.warnNoJson === false
      ? undefined
      : new JsonSniffer(NO_JSON_LINES, () => {
          const how = streamCommandFor(agentName);
          report.warn("no-json", `no JSON event in the agent's output so far: was it started without its stream flag (${how})? Only the file watcher sees its changes`);
        });

  let warnedLongLine = false;
  // The parser itself is the sink: a Claude-shaped one takes long lines in pieces and never holds them whole.
  const splitter = new LineSplitter(parser, {
    maxLineLength: options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH,
    onOverflow: (length) => {
      if (warnedLongLine) return;
      warnedLongLine = true;
      report.warn("long-line", `a line of over ${length} bytes was passed through but not parsed (the limit is ${options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH} bytes)`);
    },
  });

  // Loaded lazily: the sync code and the watcher cost start-up time the first output byte must not wait for.
  const sync: Promise<SyncSession> | undefined = options.dryRun
    ? undefined
    : afterThisTurn(() => import("./sync/index.js")).then(async ({ createSyncSession, remindOfPending }) => {
        await remindOfPending(policy.root, apiUrl, projectId, report);
        return createSyncSession({
          apiUrl,
          projectId,
          token: options.token,
          root: policy.root,
          requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
          maxFileSize: options.maxFileSize ?? DEFAULTS.maxFileSize,
          concurrency: options.concurrency ?? DEFAULTS.concurrency,
          debounceMs: options.debounceMs ?? DEFAULTS.debounceMs,
          maxWaitMs: options.maxWaitMs ?? DEFAULTS.maxWaitMs,
          source,
          report,
          prefix: options.prefix,
          ignore: policy.ignore,
          mode: options.twoWay ? "two-way" : "push",
          create: options.create,
          onStopped: options.onSyncStopped,
        });
      });
  // Events are hints, the tree is the truth: scans compare it with the base and feed the same queue.
  const scans: Promise<ScanLoop> | undefined = sync?.then(async (session) => {
    const { ScanLoop } = await import("./sync/scan-loop.js");
    const loop = new ScanLoop({ session, report, twoWay: options.twoWay === true, everyMs: options.fsWatch === false ? 0 : (options.rescanMs ?? DEFAULTS.rescanMs) });
    void loop.run("start");
    return loop;
  });
  const fsWatcher: Promise<FsWatcher> | undefined =
    options.fsWatch === false
      ? undefined
      : afterThisTurn(() => import("./fswatch.js")).then(({ startFsWatcher }) =>
          startFsWatcher({ root: policy.root, ignoreEngine: policy.ignore, poll: options.poll, report, onChange }),
        );
  void fsWatcher?.then(async (watcher) => {
    await watcher.ready;
    await (await scans)?.run("ready");
  });

  const transcript: Transcript | undefined =
    options.transcript && !options.dryRun
      ? createTranscript({
          root: policy.root,
          apiUrl,
          projectId,
          token: options.token,
          sessionId: source.sessionId,
          requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
          report,
        })
      : undefined;

  let ended: Promise<WatchSummary> | undefined;

  /**
   * `deadline` (end, not abort): the settle and the last scans must leave the flush its time
   * within the flush timeout; a deep or huge tree cuts them short (the next start's scan catches up).
   */
  const finish = async (
    stop: (session: SyncSession, remainingMs: number) => Promise<SyncResult>,
    stopTranscript: (transcript: Transcript) => Promise<TranscriptResult>,
    deadline: Deadline | undefined,
  ): Promise<WatchSummary> => {
    const transcriptResult = transcript && stopTranscript(transcript);
    sniffer?.end();
    splitter.end();
    parser.end();
    const watcher = await fsWatcher;
    // A change made just before the agent exited may still be on its way from the kernel: the
    // watcher's settle barrier (a cookie under .uspark/) says when every earlier event was read.
    const eventsComplete = watcher && deadline ? (await deadline.race(watcher.settle())) === true : false;
    await watcher?.close();
    const loop = await scans;
    // Whatever the events missed is synced and counted before the exit code is decided.
    if (loop && deadline) await loop.end(deadline.signal, eventsComplete);
    else loop?.stop();
    const result = sync ? await stop(await sync, deadline?.remainingMs() ?? 0) : undefined;
    // In-root files the API cannot name (not UTF-8, a backslash, too long) count as not synced (exit 1).
    const unrepresentable = (loop?.unrepresentable ?? []).map(({ remote, reason }) => ({ remote, reason }));
    const transcriptDone = await transcriptResult;
    const unsent = transcriptDone !== undefined && (transcriptDone.state === "spooled" || transcriptDone.state === "truncated");
    const summary: WatchSummary = {
      agent: source.agent === "unknown" ? undefined : source.agent,
      detected,
      refused: refusedPaths.size,
      unrepresentable,
      scanCutShort: loop?.cutShortByDeadline === true,
      sync: result,
      transcript: transcriptDone,
      exitCode: 0,
    };
    summary.exitCode = result?.usage ? 2 : unsent || (result && !fullySynced(summary)) ? 1 : 0;
    reportSummary(report, summary, dryRunPaths.size);
    return summary;
  };

  return {
    write(chunk) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      const wait = transcript?.write(bytes);
      if (sniffer) {
        sniffer.push(bytes);
        if (sniffer.decided) sniffer = undefined;
      }
      splitter.push(bytes);
      return wait;
    },
    message(event) {
      sniffer = undefined;
      const line = Buffer.from(JSON.stringify(event));
      void transcript?.write(Buffer.concat([line, NEWLINE])); // one event: the hard limit bounds a caller that never waits
      parser.line(line);
    },
    end() {
      const timeoutMs = options.flushTimeoutMs ?? DEFAULTS.flushTimeoutMs;
      ended ??= finish((session, remainingMs) => session.finish(remainingMs), (t) => t.end(timeoutMs), deadlineIn(timeoutMs));
      return ended;
    },
    abort() {
      // Also cuts short an end() under way: the session journals what is left and settles.
      if (ended) {
        void sync?.then((session) => session.abort());
        void transcript?.abort();
      } else {
        ended = finish((session) => session.abort(), (t) => t.abort(), undefined);
      }
      return ended;
    },
  };
}

const NEWLINE = Buffer.from("\n");
/** Lines of text with no JSON event among them before the stream counts as one without. */
const NO_JSON_LINES = 50;

function fullySynced(summary: WatchSummary): boolean {
  return summary.sync !== undefined && allSynced(summary.sync) && summary.unrepresentable.length === 0 && summary.scanCutShort !== true;
}

function reportSummary(report: Reporter, summary: WatchSummary, dryRunFiles: number): void {
  const refused = summary.refused ? `, ${summary.refused} refused` : "";
  const fields = { ...summary, sync: undefined, ...summary.sync };
  if (!summary.sync) {
    report.info("summary", `dry run: ${plural(dryRunFiles, "file")} would be pushed (${plural(summary.detected, "change")}${refused})`, fields);
    return;
  }
  const { commits, pushed, deleted, unchanged, stopped, pulled, removed, conflicts } = summary.sync;
  const notListed = [...summary.sync.failed, ...summary.sync.skipped, ...summary.unrepresentable, ...summary.sync.held];
  const fromRemote = pulled + removed > 0 ? `, ${plural(pulled, "file")} pulled, ${removed} deleted here` : "";
  const done = `${plural(pushed, "file")} pushed, ${deleted} deleted, ${unchanged} unchanged in ${plural(commits, "commit")}${fromRemote}${refused}`;
  if (fullySynced(summary)) {
    report.info("summary", `synced: ${done}`, fields);
    return;
  }
  reportNotSynced(report, notListed);
  if (conflicts.length > 0) {
    const shown = conflicts.slice(0, 5).map((c) => `${c.remote} (yours in ${c.copy})`).join(", ");
    report.error("conflicts", `${plural(conflicts.length, "conflict")} open: ${shown}${conflicts.length > 5 ? ", …" : ""}; resolve with uspark push --force <path> (yours) or uspark pull --force <path> (theirs)`, { conflicts });
  }
  const journal = summary.sync.journaled
    ? ` ${plural(summary.sync.journaled, "entry")} written to .uspark/pending.json: run \`uspark push --pending\` to retry.`
    : "";
  const headline = notSyncedHeadline({ files: notListed.length, conflicts: conflicts.length, stopped, scanCutShort: summary.scanCutShort === true });
  report.error("summary", `${headline}; ${done}.${journal}`, fields);
}

/**
 * What the summary says first when not all is synced: the conflicts open, the files left, and why.
 * With neither (a scan cut short, syncing stopped with nothing pending) it is "not all synced",
 * never "0 files not synced".
 */
export function notSyncedHeadline(left: { files: number; conflicts: number; stopped?: string; scanCutShort: boolean }): string {
  const parts = [left.conflicts > 0 ? `${plural(left.conflicts, "conflict")} open` : "", left.files > 0 ? `${plural(left.files, "file")} not synced` : ""];
  const what = parts.filter(Boolean).join(", ") || "not all synced";
  if (left.stopped) return `${what} (syncing stopped: ${left.stopped})`;
  if (!left.scanCutShort) return what;
  return `${what} (the last scan of the tree was cut short by the flush timeout${parts.some(Boolean) ? "" : "; the next start's scan finds what it missed"})`;
}

interface Deadline {
  /** Aborted when the time is up. */
  signal: AbortSignal;
  remainingMs(): number;
  /** `work`, or nothing once the time is up (work left running is cut short by `signal`). */
  race(work: Promise<unknown>): Promise<unknown>;
}

function deadlineIn(ms: number): Deadline {
  const at = Date.now() + ms;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`the flush timeout of ${ms} ms passed`)), ms);
  timer.unref();
  const timeUp = new Promise<void>((resolve) => controller.signal.addEventListener("abort", () => resolve(), { once: true }));
  return {
    signal: controller.signal,
    remainingMs: () => Math.max(0, at - Date.now()),
    race: (work) => Promise.race([work, timeUp]),
  };
}

/**
 * Loads a module once this turn of the event loop is over: stdin bytes that are waiting already
 * go out first, instead of after the module is read and compiled.
 */
function afterThisTurn<T>(load: () => Promise<T>): Promise<T> {
  return new Promise<void>((resolve) => setImmediate(resolve)).then(load);
}

function plural(count: number, noun: string): string {
  if (count === 1) return `1 ${noun}`;
  return `${count} ${noun.endsWith("y") ? noun.slice(0, -1) + "ies" : noun + "s"}`;
}
