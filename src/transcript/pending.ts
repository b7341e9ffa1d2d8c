import type { Reporter } from "../report/reporter.js";
import { ApiClient } from "../transfer/client.js";
import { normalizeApiUrl } from "../config/config.js";
import { idleDeadline } from "../transfer/deadline.js";
import type { BackoffPolicy } from "../transfer/retry.js";
import { readSpools, removeSpool, spoolDataName, SpoolReader, writeSpoolMeta, type SpoolMeta } from "./spool.js";
import { appendNext, TranscriptsNotSupported } from "./upload.js";
import { errorCode, errorText } from "../errors/text.js";

/**
 * `uspark push --pending`, transcript part: sends the spools earlier runs left for this API URL
 * and project, from the acknowledged offset on (resuming from the server's length), and removes
 * each spool once the server has all of its bytes.
 */

export interface PendingTranscriptsOptions {
  root: string;
  apiUrl: string;
  projectId: string;
  token?: string;
  requestTimeoutMs: number;
  /** Give up on a spool after this long without an append going through. */
  timeoutMs: number;
  report: Reporter;
  backoff?: BackoffPolicy;
}

/** This project's spools, except those a running uspark is still writing. */
export async function pendingTranscripts(
  options: Pick<PendingTranscriptsOptions, "root" | "apiUrl" | "projectId" | "report">,
): Promise<SpoolMeta[]> {
  const api = normalizeApiUrl(options.apiUrl);
  const spools = await readSpools(options.root, options.report);
  return spools.filter((meta) => {
    if (normalizeApiUrl(meta.apiUrl) !== api || meta.projectId !== options.projectId) return false;
    if (meta.pid === undefined || meta.pid === process.pid || !isRunning(meta.pid)) return true;
    options.report.info(
      "transcript",
      `the transcript of session ${meta.sessionId} is still being written (pid ${meta.pid}); left for later`,
    );
    return false;
  });
}

/** Sends the spools; returns how many are still not sent in full. */
export async function sendPendingTranscripts(spools: readonly SpoolMeta[], options: PendingTranscriptsOptions): Promise<number> {
  const client = new ApiClient({ ...options, connections: 1 });
  let unsent = 0;
  try {
    for (const meta of spools) if (!(await sendSpool(client, meta, options))) unsent++;
  } finally {
    await client.close();
  }
  return unsent;
}

async function sendSpool(client: ApiClient, meta: SpoolMeta, options: PendingTranscriptsOptions): Promise<boolean> {
  const { report, root } = options;
  const file = `.uspark/${spoolDataName(meta.sessionId)}`;
  const reader = await SpoolReader.open(root, meta.sessionId, meta.base);
  let offset = meta.acked;
  const controller = new AbortController();
  const deadline = idleDeadline({
    timeoutMs: options.timeoutMs,
    longTransferDeadline: () => client.longTransferDeadline(),
    expire: () => controller.abort(),
  });
  try {
    const end = reader?.end ?? meta.base;
    const source = { from: meta.base, end, read: (from: number, max: number) => reader!.read(from, max) };
    while (offset < end) {
      offset = await appendNext(source, offset, { client, sessionId: meta.sessionId, signal: controller.signal, backoff: options.backoff });
      deadline.progress();
    }
    await reader?.close();
    await removeSpool(root, meta.sessionId);
    report.info("transcript", `transcript of session ${meta.sessionId} sent (${end} bytes)`);
    return true;
  } catch (error) {
    await reader?.close();
    if (error instanceof TranscriptsNotSupported) {
      await removeSpool(root, meta.sessionId);
      report.info("transcript", `${error.message}: the transcript of session ${meta.sessionId} is dropped`);
      return true;
    }
    const why = controller.signal.aborted ? `no progress for ${options.timeoutMs} ms` : errorText(error);
    await writeSpoolMeta(root, { ...meta, acked: offset, pid: undefined }).catch(() => undefined);
    report.error("transcript", `transcript of session ${meta.sessionId}: ${why}; still in ${file}`);
    return false;
  } finally {
    deadline.stop();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}
