import { AGENTS, agentNames } from "../agents/index.js";
import { checkApiUrl, DEFAULT_API_URL, requireProjectId, UsageError } from "../config/config.js";
import { nodeCrypto } from "../util/lazy-builtins.js";
import { createPathPolicy, type PathPolicy } from "../paths/paths.js";
import { plural, pushedFiles, Reporter, reportNotSynced } from "../report/reporter.js";
import type { SyncOptions, SyncResult, SyncSession } from "../sync/index.js";
import { allSynced } from "../sync/outcome.js";
import { RESOLVE_HINT } from "../reconcile/conflict-copy.js";
import { createTranscript, type Transcript, type TranscriptOptions, type TranscriptResult } from "../transcript/recorder.js";
import { ChangeIntake } from "./intake.js";
import { StreamReader } from "./stream-reader.js";
import { deadlineIn, TreeSync, type TreeSyncStop } from "./tree-sync.js";

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
  /** Another uspark's file watcher sees the tree (a session beside a daemon): what the warnings say of changes no event names. */
  watchedBeside?: boolean;
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
  /** Give up on a server silent this long; at the end, wait at most this long for the last pushes (--timeout). */
  timeoutMs?: number;
  /** The older name of timeoutMs (until 0.4), still taken. */
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
  /** What commits name as their agent until the stream names one (`watch --no-stdin`: "watch"; `run`: "run"). Default "unknown". */
  commitAgent?: string;
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
  /** Why the server is refused: its history does not extend this tree's (undefined: it does, or it could not be asked). */
  historyRefusal(): Promise<string | undefined>;
}

export const DEFAULTS = {
  debounceMs: 300,
  maxWaitMs: 2000,
  timeoutMs: 60_000,
  /** The older name of timeoutMs. */
  flushTimeoutMs: 60_000,
  requestTimeoutMs: 30_000,
  maxFileSize: 50 * 1024 * 1024,
  concurrency: 4,
  rescanMs: 30_000,
  /** `uspark run`: how long the agent's stdout may stay open after it exited. */
  exitGraceMs: 3000,
} as const;

export function createWatcher(options: WatcherOptions = {}): Watcher {
  const agent = options.agent ?? "auto";
  if (agent !== "auto" && !Object.hasOwn(AGENTS, agent)) {
    throw new UsageError(`unknown agent ${JSON.stringify(agent)}`, `choose one of: auto, ${agentNames.join(", ")}`);
  }
  const projectId = options.dryRun ? "" : requireProjectId(options.projectId, { dryRunNeedsNone: true });
  const apiUrl = checkApiUrl(options.apiUrl ?? DEFAULT_API_URL, options.insecure === true);
  const policy = createPathPolicy({ root: options.root ?? process.cwd(), ignore: options.ignore, prefix: options.prefix });
  return new WatchSession(options, { report: options.report ?? new Reporter(), agent, projectId, apiUrl, policy });
}

/** What createWatcher checked and settled of the options. */
interface Settled {
  report: Reporter;
  agent: string;
  projectId: string;
  apiUrl: string;
  policy: PathPolicy;
}

/**
 * One watch: the stream read for changes, each change through the path policy into the tree's
 * sync (with the file watcher's), the transcript beside; `end` stops them in that order.
 */
class WatchSession implements Watcher {
  private readonly source: CommitSource;
  /** The agent whose stream this is: given, or detected (undefined until then). */
  private agentName: string | undefined;
  private readonly intake: ChangeIntake;
  private readonly reader: StreamReader;
  private readonly tree: TreeSync;
  private readonly transcript: Transcript | undefined;
  private ended: Promise<WatchSummary> | undefined;

  constructor(
    private readonly options: WatcherOptions,
    private readonly settled: Settled,
  ) {
    const { report, agent, policy } = settled;
    this.agentName = agent === "auto" ? undefined : agent;
    this.source = commitSource(this.agentName ?? options.commitAgent ?? "unknown");
    // A relative path in a stream that names no working directory is the agent's, and the agent
    // runs where we were started (a shell pipe, or `uspark run`), which need not be --root.
    const agentCwd = options.agentCwd ?? process.cwd();
    const dryRun = options.dryRun === true;
    this.intake = new ChangeIntake({ policy, report, agentCwd, dryRun, accept: (remote, cause) => this.tree.add(remote, cause) });
    const fsWatch = options.fsWatch !== false;
    this.reader = new StreamReader({
      agent,
      report,
      onChange: this.intake.take,
      onAgent: (name) => (this.agentName = this.source.agent = name),
      fsWatch: fsWatch || options.watchedBeside === true,
      warnNoJson: options.warnNoJson !== false,
      maxLineLength: options.maxLineLength,
    });
    this.tree = new TreeSync({
      policy,
      report,
      onChange: this.intake.take,
      fsWatch: fsWatch ? { poll: options.poll } : undefined,
      sync: dryRun ? undefined : this.syncOptions(),
      rescanMs: fsWatch ? (options.rescanMs ?? DEFAULTS.rescanMs) : 0,
      twoWay: options.twoWay === true,
    });
    this.transcript = options.transcript && !dryRun ? createTranscript(this.transcriptOptions()) : undefined;
  }

  write(chunk: Buffer | string): void | Promise<void> {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    const wait = this.transcript?.write(bytes);
    this.reader.push(bytes);
    return wait;
  }

  message(event: unknown): void {
    const line = Buffer.from(JSON.stringify(event));
    void this.transcript?.write(Buffer.concat([line, NEWLINE])); // one event: the hard limit bounds a caller that never waits
    this.reader.line(line);
  }

  historyRefusal(): Promise<string | undefined> {
    return this.tree.historyRefusal();
  }

  end(): Promise<WatchSummary> {
    const timeoutMs = this.options.timeoutMs ?? this.options.flushTimeoutMs ?? DEFAULTS.timeoutMs;
    const stop = (session: SyncSession, remainingMs: number) => session.finish(remainingMs);
    this.ended ??= this.finish({ stop, deadline: deadlineIn(timeoutMs) }, (t) => t.end(timeoutMs));
    return this.ended;
  }

  abort(): Promise<WatchSummary> {
    // Also cuts short an end() under way: the session journals what is left and settles.
    if (this.ended) {
      this.tree.abort();
      void this.transcript?.abort();
    } else {
      this.ended = this.finish({ stop: (session) => session.abort(), deadline: undefined }, (t) => t.abort());
    }
    return this.ended;
  }

  private async finish(
    treeStop: TreeSyncStop,
    stopTranscript: (transcript: Transcript) => Promise<TranscriptResult>,
  ): Promise<WatchSummary> {
    const transcriptResult = this.transcript && stopTranscript(this.transcript);
    this.reader.end();
    const tree = await this.tree.end(treeStop);
    const transcript = await transcriptResult;
    const { intake } = this;
    const summary: WatchSummary = {
      agent: this.agentName,
      detected: intake.detected,
      refused: intake.refused.size,
      // In-root files the API cannot name (not UTF-8, a backslash, too long) count as not synced (exit 1).
      unrepresentable: tree.unrepresentable,
      scanCutShort: tree.scanCutShort,
      sync: tree.result,
      transcript,
      exitCode: 0,
    };
    const unsent = transcript !== undefined && (transcript.state === "spooled" || transcript.state === "truncated");
    summary.exitCode = tree.result?.usage ? 2 : unsent || (tree.result && !fullySynced(summary)) ? 1 : 0;
    reportSummary(this.settled.report, summary, intake.dryRunPaths.size);
    return summary;
  }

  private syncOptions(): SyncOptions {
    const { options } = this;
    const { apiUrl, projectId, policy, report } = this.settled;
    return {
      apiUrl,
      projectId,
      token: options.token,
      root: policy.root,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      maxFileSize: options.maxFileSize ?? DEFAULTS.maxFileSize,
      concurrency: options.concurrency ?? DEFAULTS.concurrency,
      debounceMs: options.debounceMs ?? DEFAULTS.debounceMs,
      maxWaitMs: options.maxWaitMs ?? DEFAULTS.maxWaitMs,
      source: this.source,
      report,
      prefix: options.prefix,
      ignore: policy.ignore,
      mode: options.twoWay ? "two-way" : "push",
      create: options.create,
      onStopped: options.onSyncStopped,
    };
  }

  private transcriptOptions(): TranscriptOptions {
    const { apiUrl, projectId, policy, report } = this.settled;
    const { token, requestTimeoutMs } = this.options;
    return {
      root: policy.root,
      apiUrl,
      projectId,
      token,
      sessionId: this.source.sessionId,
      requestTimeoutMs: requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      report,
    };
  }
}

/** What the commits say of their source: the agent, and a session id made when first needed. */
interface CommitSource {
  agent: string;
  readonly sessionId: string;
}

/**
 * The session id is made when a commit or the transcript first needs it: a dry run never does,
 * and node:crypto, loaded for it alone, cost a dry run's start some 7 M instructions.
 */
function commitSource(agent: string): CommitSource {
  let sessionId: string | undefined;
  return {
    agent,
    get sessionId() {
      return (sessionId ??= nodeCrypto().randomUUID());
    },
  };
}

const NEWLINE = Buffer.from("\n");

function fullySynced(summary: WatchSummary): boolean {
  return summary.sync !== undefined && allSynced(summary.sync) && summary.unrepresentable.length === 0 && summary.scanCutShort !== true;
}

function reportSummary(report: Reporter, summary: WatchSummary, dryRunFiles: number): void {
  const refused = summary.refused ? `, ${summary.refused} refused` : "";
  const fields = { ...summary, sync: undefined, ...summary.sync };
  if (!summary.sync) {
    report.info(
      "summary",
      `dry run: ${plural(dryRunFiles, "file")} would be pushed (${plural(summary.detected, "change")}${refused})`,
      fields,
    );
    return;
  }
  const { commits, pushed, copies, deleted, unchanged, stopped, pulled, removed, conflicts } = summary.sync;
  const notListed = [...summary.sync.failed, ...summary.sync.skipped, ...summary.unrepresentable, ...summary.sync.held];
  const fromRemote = pulled + removed > 0 ? `, ${plural(pulled, "file")} pulled, ${removed} deleted here` : "";
  const done = `${pushedFiles(pushed, copies)}, ${deleted} deleted, ${unchanged} unchanged in ${plural(commits, "commit")}${fromRemote}${refused}`;
  if (fullySynced(summary)) {
    report.info("summary", `synced: ${done}`, fields);
    return;
  }
  reportNotSynced(report, notListed);
  if (conflicts.length > 0) {
    const shown = conflicts
      .slice(0, 5)
      .map((c) => (c.copy ? `${c.remote} (yours in ${c.copy})` : c.remote))
      .join(", ");
    report.error(
      "conflicts",
      `${plural(conflicts.length, "conflict")} open: ${shown}${conflicts.length > 5 ? ", …" : ""}; resolve each with ${RESOLVE_HINT}`,
      { conflicts },
    );
  }
  const journal = summary.sync.journaled
    ? ` ${plural(summary.sync.journaled, "entry")} written to .uspark/pending.json: run \`uspark push --pending\` to retry.`
    : "";
  const headline = notSyncedHeadline({
    files: notListed.length,
    conflicts: conflicts.length,
    stopped,
    scanCutShort: summary.scanCutShort === true,
  });
  report.error("summary", `${headline}; ${done}.${journal}`, fields);
}

/**
 * What the summary says first when not all is synced: the conflicts open, the files left, and why.
 * With neither (a scan cut short, syncing stopped with nothing pending) it is "not all synced",
 * never "0 files not synced".
 */
export function notSyncedHeadline(left: { files: number; conflicts: number; stopped?: string; scanCutShort: boolean }): string {
  const parts = [
    left.conflicts > 0 ? `${plural(left.conflicts, "conflict")} open` : "",
    left.files > 0 ? `${plural(left.files, "file")} not synced` : "",
  ];
  const what = parts.filter(Boolean).join(", ") || "not all synced";
  if (left.stopped) return `${what} (syncing stopped: ${left.stopped})`;
  if (!left.scanCutShort) return what;
  return `${what} (the last scan of the tree was cut short by --timeout${parts.some(Boolean) ? "" : "; the next start's scan finds what it missed"})`;
}
