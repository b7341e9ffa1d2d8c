import { promises as fsp } from "node:fs";
import path from "node:path";
import { createPathPolicy, isInside, ignoredNow } from "./paths.js";
import { isMassDelete, MASS_DELETE_TEXT } from "./mass-delete.js";
import { reportNotSynced } from "./report.js";
import { createSyncSession, type SyncOptions, type SyncResult, type SyncTarget } from "./sync/index.js";
import { entriesFor, readJournal } from "./sync/journal.js";
import { DEFAULT_IDLE_TIMEOUT_MS } from "./sync/deadline.js";
import { walkFiles } from "./sync/walk.js";
import { unrepresentableFile } from "./scan/scanner.js";
import { pendingTranscripts, sendPendingTranscripts } from "./transcript/pending.js";
import type { SpoolMeta } from "./transcript/spool.js";

/**
 * `uspark push [paths...]`: a one-shot sync through the same engine as the watcher (batched
 * commits of at most `maxBatch` files, hash skipping, retries, journal).
 *
 *   no paths     every file under the root (or --prefix) that is not ignored
 *   paths        those files; a directory is walked like the root
 *   --pending    the journal's entries for this API URL + project, removed once synced
 *   --delete     also delete remote files that no longer exist locally (in the walked scope);
 *                more than MASS_DELETE of the remote only with --force (see mass-delete.ts)
 *   --dry-run    list what would be pushed (if changed) and deleted; send nothing
 *
 * Exit code: 0 all synced, 1 something not synced (journaled) or a mass delete refused
 * (nothing deleted, the rest pushed), 2 bad usage.
 */

export interface PushOptions extends SyncOptions {
  paths: string[];
  pending: boolean;
  delete: boolean;
  /** Allow a --delete of more than MASS_DELETE of the remote. */
  force?: boolean;
  dryRun?: boolean;
  ignore: string[];
  prefix?: string;
  /** Give up (and journal) after this long without a request going through. Default 60000. */
  flushTimeoutMs?: number;
  /** Relative `paths` are relative to this; default process.cwd(). */
  cwd?: string;
}

export async function runPush(options: PushOptions): Promise<number> {
  const { report } = options;
  if (options.pending && options.paths.length > 0) {
    report.error("usage", "--pending retries the journal; it takes no paths");
    return 2;
  }
  if (options.pending && options.delete) {
    report.error("usage", "--pending and --delete cannot be combined");
    return 2;
  }

  let policy;
  try {
    policy = createPathPolicy({ root: options.root, ignore: options.ignore, prefix: options.prefix });
  } catch (error) {
    report.error("usage", `cannot use the project root ${options.root}: ${(error as Error).message}`);
    return 2;
  }
  const root = policy.root;
  const session = createSyncSession({
    ...options,
    root,
    // Batches fill up while the tree is walked and go out when full; the rest at the end.
    debounceMs: Math.max(options.debounceMs, 1000),
    maxWaitMs: Math.max(options.maxWaitMs, 10_000),
    ignoredNow: (target) => ignoredNow(policy.resolve(target.abs)),
  });
  const cwd = options.cwd ?? process.cwd();
  let refused = 0;
  let refusedDeletes = 0;
  let queued = 0;
  let transcripts: SpoolMeta[] = [];
  /** Files under the root the API cannot name (not UTF-8, a backslash, too long): never synced, counted. */
  const unrepresentable: { remote: string; reason: string }[] = [];
  const add = (target: SyncTarget) => {
    queued++;
    if (!options.dryRun) return session.add(target);
    const verb = target.cause === DELETE_CAUSE ? "delete" : "push (if changed)";
    report.info("change", `would ${verb} ${target.remote}`, { path: target.remote, cause: target.cause });
  };

  try {
    if (options.pending) {
      const entries = entriesFor(await readJournal(root, report), options.apiUrl, options.projectId);
      transcripts = await pendingTranscripts({ ...options, root });
      if (entries.length === 0 && transcripts.length === 0) report.info("push", "nothing pending for this project");
      for (const entry of entries) {
        if (!isInside(root, entry.local)) {
          report.warn("refused", `pending ${entry.path}: ${entry.local} is outside the project root ${root}; left in the journal`);
          refused++;
          continue;
        }
        add({ remote: entry.path, abs: entry.local, cause: "pending" });
      }
    } else {
      /** Directories walked, as remote prefixes ("" = the whole project), for --delete. */
      const scopes: string[] = [];
      const seen = new Set<string>();
      const prefixDir = options.prefix ? path.join(root, options.prefix) : root;
      const onUnsyncable = (rel: string) => unrepresentable.push({ remote: rel, reason: "the name is not valid UTF-8" });
      const addWalked = async (dir: string) => {
        for await (const abs of walkFiles({ root, start: dir, ignoreEngine: policy.ignore, report, onUnsyncable })) {
          const decision = policy.resolve(abs);
          if (!decision.ok) {
            const why = decision.severity === "warn" ? unrepresentableFile(path.relative(prefixDir, abs).split(path.sep).join("/")) : undefined;
            if (why) unrepresentable.push(why);
            else report.debug("skip", decision.reason);
            continue;
          }
          seen.add(decision.remote);
          add({ remote: decision.remote, abs: decision.abs, cause: "push" });
        }
      };

      if (options.paths.length === 0) {
        if (await isDirectory(prefixDir)) await addWalked(prefixDir);
        scopes.push("");
      }
      for (const given of options.paths) {
        const decision = policy.resolve(given, cwd);
        if (!decision.ok) {
          if (decision.severity === "warn") report.warn("refused", decision.reason, { path: given });
          else report.info("refused", decision.reason, { path: given });
          refused++;
          continue;
        }
        if (await isDirectory(decision.abs)) {
          await addWalked(decision.abs);
          scopes.push(decision.remote);
        } else {
          // A file, or nothing (then it is a delete if the project has it).
          seen.add(decision.remote);
          add({ remote: decision.remote, abs: decision.abs, cause: "push" });
        }
      }
      if (options.delete) await queueDeletes(scopes, seen);
    }
  } catch (error) {
    report.error("push", `push failed: ${(error as Error).message}`);
  }

  const flushTimeoutMs = options.flushTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const result = await session.finish(flushTimeoutMs, { idle: true });
  if (options.dryRun) {
    reportNotSynced(report, unrepresentable);
    report.info("summary", `dry run: ${queued} considered; nothing sent`, { considered: queued });
    return result.stopped || unrepresentable.length > 0 ? 1 : 0;
  }
  const unsentTranscripts = transcripts.length > 0 ? await sendPendingTranscripts(transcripts, { ...options, root, flushTimeoutMs }) : 0;
  const notListed = [...result.failed, ...result.skipped, ...unrepresentable];
  reportNotSynced(report, notListed);
  const summary = pushSummary(result, queued, unrepresentable.length) + (result.journaled > 0 ? `; kept in .uspark/pending.json, retry with: uspark push --pending` : "");
  if (notListed.length > 0 || result.stopped) report.error("summary", summary, { ...result });
  else report.info("summary", summary, { ...result });
  const notSynced = notListed.length + refused + refusedDeletes + unsentTranscripts;
  return result.stopped || notSynced > 0 ? 1 : 0;

  /** Remote files in scope with nothing at their local path become deletes. */
  async function queueDeletes(scopes: string[], seen: Set<string>): Promise<void> {
    let remotePaths: string[];
    try {
      remotePaths = await session.listRemote();
    } catch {
      return; // stopped: finish() reports why
    }
    const deletes: SyncTarget[] = [];
    for (const remote of remotePaths) {
      if (seen.has(remote)) continue;
      if (!scopes.some((scope) => scope === "" || remote === scope || remote.startsWith(scope + "/"))) continue;
      const local = path.join(root, ...(options.prefix ? [options.prefix] : []), ...remote.split("/"));
      if (!isInside(root, local)) continue;
      try {
        await fsp.lstat(local);
        continue; // something is there (ignored, or a symlink): not ours to delete
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" && (error as NodeJS.ErrnoException).code !== "ENOTDIR") continue;
      }
      deletes.push({ remote, abs: local, cause: DELETE_CAUSE });
    }
    if (isMassDelete(deletes.length, remotePaths.length) && !options.force) {
      const what = `${deletes.length} of the ${remotePaths.length} remote files have no local copy under ${path.join(root, options.prefix ?? "")}`;
      const hint = `deleting more than ${MASS_DELETE_TEXT} of the project needs --force; check --root and --prefix`;
      if (options.dryRun) report.warn("mass-delete", `${what}: push --delete would refuse to delete them (${hint})`, { deletes: deletes.length, remote: remotePaths.length });
      else {
        report.error("mass-delete", `${what}: not deleting them (${hint}; see the list with --dry-run)`, { deletes: deletes.length, remote: remotePaths.length });
        refusedDeletes = deletes.length;
        return;
      }
    }
    for (const target of deletes) add(target);
  }
}

const DELETE_CAUSE = "push --delete";

/** `unsyncable`: files walked that the API cannot name, counted as not synced. */
function pushSummary(result: SyncResult, considered: number, unsyncable: number): string {
  const parts = [
    `${result.pushed} ${result.pushed === 1 ? "file" : "files"} pushed in ${result.commits} ${result.commits === 1 ? "commit" : "commits"}`,
  ];
  if (result.deleted > 0) parts.push(`${result.deleted} deleted`);
  parts.push(`${result.unchanged} unchanged`);
  const notSynced = result.failed.length + result.skipped.length + unsyncable;
  if (notSynced > 0) parts.push(`${notSynced} not synced`);
  return `push: ${parts.join(", ")} (${considered} considered)`;
}

async function isDirectory(abs: string): Promise<boolean> {
  try {
    return (await fsp.lstat(abs)).isDirectory();
  } catch {
    return false;
  }
}
