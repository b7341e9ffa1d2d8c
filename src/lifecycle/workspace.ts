import os from "node:os";
import { realpath } from "node:fs/promises";
import type { CommitSource } from "../api/types.js";
import { UsageError } from "../config/config.js";
import { IgnoreEngine } from "../ignore/engine.js";
import { BaseKeeper } from "../reconcile/base-keeper.js";
import { DiskTree } from "../reconcile/disk-tree.js";
import type { TransferProgress } from "../reconcile/progress.js";
import { Reconciler } from "../reconcile/reconciler.js";
import { RemoteView } from "../reconcile/remote-view.js";
import { checkLineage, RewoundError } from "../reconcile/lineage.js";
import { fileStateStore } from "../reconcile/state-store.js";
import { removeOwnTemps } from "../state/own-temps.js";
import { gitCleanFiles } from "../reconcile/git-clean.js";
import type { Reporter } from "../report/reporter.js";
import { ApiClient } from "../transfer/client.js";
import { DEFAULT_IDLE_TIMEOUT_MS, idleDeadline, type IdleDeadline } from "../transfer/deadline.js";
import { ProjectRemote } from "../transfer/project-remote.js";
import { hostOf, RetryingCaller, type BackoffPolicy } from "../transfer/retry.js";
import { ProgressLine } from "../terminal/progress.js";
import { withProject } from "../transfer/projects.js";
import { errorText } from "../errors/text.js";

/**
 * The parts of one push, pull or status: the tree under the root, the project's API under one
 * retry policy, the remote view, the base, and the reconciler over them. It gives up when the
 * server has not answered for `timeoutMs` (a large transfer within its own deadline counts as
 * an answer).
 */

export interface WorkspaceOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  root: string;
  prefix?: string;
  ignore?: readonly string[];
  requestTimeoutMs: number;
  concurrency: number;
  maxFileSize: number;
  report: Reporter;
  source: CommitSource;
  /** Give up when the server has not answered for this long, ms. Default 60000. */
  timeoutMs?: number;
  backoff?: BackoffPolicy;
  /** Create the project if the server does not have it (else that is a usage error, exit 2). */
  create?: boolean;
  /** Nothing is written, .uspark/state.json included. */
  dryRun?: boolean;
  /** A server whose history does not extend this tree's is taken as it is (push --onto-rewound), not refused. */
  ontoRewound?: boolean;
}

export interface Workspace {
  root: string;
  /** The project's API under the retry policy and the idle deadline (what commands ask it through). */
  remote: ProjectRemote;
  view: RemoteView;
  base: BaseKeeper;
  reconciler: Reconciler;
  tree: DiskTree;
  /** The server's history does not extend this tree's, and ontoRewound took it as it is. */
  rewound: boolean;
  signal: AbortSignal;
  /** Writes the base, closes the connections. */
  close(): Promise<void>;
}

/** The commands that open a workspace: each says its failure as `<command>-failed` (docs/log-events.md). */
export type WorkspaceCommand = "push" | "pull" | "status" | "diff" | "resolve" | "log" | "ls" | "cat" | "restore";

/**
 * The workspace, or the exit code after its failure was said: 2 for a project that does not
 * exist (with the nearest ids), 1 for a server that never answered.
 */
export async function openOrExit(options: WorkspaceOptions, command: WorkspaceCommand): Promise<Workspace | 1 | 2> {
  try {
    return await openWorkspace(options);
  } catch (error) {
    if (error instanceof UsageError) {
      options.report.error("usage", error.hint ? `${error.message} (${error.hint})` : error.message);
      return 2;
    }
    if (error instanceof RewoundError) {
      options.report.error("rewound", error.message);
      return 1;
    }
    options.report.error(`${command}-failed`, `${command} failed: ${errorText(error)}`);
    return 1;
  }
}

/** The server's side of a workspace: the client, its calls' retries, and the idle deadline that aborts `controller` when the server falls silent. */
function connect(options: WorkspaceOptions) {
  const { report } = options;
  const client = new ApiClient({ ...options, connections: options.concurrency + 1, report });
  const controller = new AbortController();
  const timeoutMs = options.timeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const deadline: IdleDeadline = idleDeadline({
    timeoutMs,
    longTransferDeadline: () => client.longTransferDeadline(),
    // Walking and hashing a large tree is not the server's silence: the clock runs while a request does.
    waiting: () => caller.busy,
    expire: () => controller.abort(new Error(`the server has not answered for ${timeoutMs} ms`)),
  });
  const caller = new RetryingCaller({
    report,
    host: hostOf(options.apiUrl),
    policy: options.backoff,
    onProgress: () => deadline.progress(),
    onStart: () => deadline.progress(),
  });
  const remote = new ProjectRemote(client, caller, { concurrency: options.concurrency, report });
  const view = new RemoteView(remote, report);
  return { client, controller, deadline, remote, view };
}

export async function openWorkspace(options: WorkspaceOptions): Promise<Workspace> {
  const { report } = options;
  const root = await realpath(options.root);
  const prefix = options.prefix?.replace(/\/+$/, "") || undefined;
  const { client, controller, deadline, remote, view } = connect(options);
  const ignore = new IgnoreEngine({ root, ignore: options.ignore });
  const tree = new DiskTree({ root, prefix, ignore, maxFileSize: options.maxFileSize, report });
  const base = await BaseKeeper.load(
    { apiUrl: options.apiUrl, projectId: options.projectId, prefix },
    { store: fileStateStore(root, report), report },
  );
  view.pairWith(base);
  const progress = new ProgressLine(report);
  const onProgress: TransferProgress = (what, done, total) => progress.update(what, done, total);
  // The first listing: a project that does not exist is said now (exit 2), or created (--create);
  // then a server whose history does not extend this tree's is refused before anything is done.
  let rewound = false;
  try {
    await withProject(client, options.projectId, options.create === true, report, () => view.ensure(controller.signal));
    rewound = await checkLineage(base.base, { view, remote, report }, controller.signal, options.ontoRewound === true);
  } catch (error) {
    deadline.stop();
    await client.close();
    throw error;
  }
  if (!options.dryRun) {
    await base.markClock();
    await removeOwnTemps(root); // what a pull killed mid-write left
  }
  const reconciler = new Reconciler({
    tree,
    remote,
    view,
    base,
    report,
    source: options.source,
    host: os.hostname(),
    maxFileSize: options.maxFileSize,
    gitClean: () => gitCleanFiles(tree.dir),
    onProgress,
  });
  return {
    root,
    remote,
    view,
    base,
    reconciler,
    tree,
    rewound,
    signal: controller.signal,
    async close() {
      progress.clear();
      deadline.stop();
      // A dry run may share the root with a running watch: it never writes the watch's state file.
      if (options.dryRun) base.discard();
      else await base.close();
      await client.close();
    },
  };
}
