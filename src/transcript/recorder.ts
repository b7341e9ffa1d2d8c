import type { FileHandle } from "node:fs/promises";
import type { Reporter } from "../report.js";
import { ApiClient } from "../transfer/client.js";
import { sleep, type BackoffPolicy } from "../transfer/retry.js";
import { ByteQueue } from "./queue.js";
import { openSpoolForAppend, removeSpool, spoolDataName, SpoolReader, writeSpoolMeta, type SpoolMeta } from "./spool.js";
import type { TranscriptSource } from "./upload.js";

/**
 * `--transcript`: the agent's stream, byte for byte, to PUT /sessions/{id}/events. `write` copies
 * the chunk into a small memory queue and returns. A sender appends what is new at most every
 * BATCH_MS while input lasts, so a burst never takes the machine from the agent's output, and
 * as fast as the server answers once it ended. Past MEMORY_LIMIT unsent bytes, or once the
 * server fails to answer, the bytes go to the spool under `.uspark/` instead, from where they
 * are sent (now, or by `uspark push --pending`). Only a spool slower than the agent makes the
 * agent wait: `write` then returns a promise, and the caller reads no more until it settles.
 */

export interface TranscriptOptions {
  root: string;
  apiUrl: string;
  projectId: string;
  token?: string;
  /** The session id the commits carry in `source.sessionId`. */
  sessionId: string;
  requestTimeoutMs: number;
  report: Reporter;
  backoff?: BackoffPolicy;
}

export interface TranscriptResult {
  sessionId: string;
  /** Bytes recorded. */
  bytes: number;
  /** Bytes the server acknowledged. */
  sent: number;
  /**
   * sent: the server has every byte. not-supported: a v1 server, nothing kept. spooled: the rest
   * is in the spool for `push --pending`. truncated: the spool could not be written; bytes lost.
   */
  state: "sent" | "not-supported" | "spooled" | "truncated";
}

export interface Transcript {
  /** A promise: the spool is behind; write no more until it settles (see HARD_LIMIT). */
  write(chunk: Uint8Array): void | Promise<void>;
  /** End of input: send what is left within `timeoutMs`, spool the rest. */
  end(timeoutMs: number): Promise<TranscriptResult>;
  /** Stop now: spool what is unsent without waiting for the server. */
  abort(): Promise<TranscriptResult>;
}

/** Unsent bytes held in memory; past this they are spooled, and a writer waits for the spool. */
const MEMORY_LIMIT = 8 * 1024 * 1024;
/** Unsent bytes in memory past which a writer that did not wait loses the rest of the transcript. */
const HARD_LIMIT = 2 * MEMORY_LIMIT;
/** Least time between two appends while input lasts; once spooled, the quiet an append waits for. */
const BATCH_MS = 250;

interface Spool {
  base: number;
  /** The stream offset up to which bytes are in the file. */
  written: number;
  ready: Promise<{ handle: FileHandle; reader: SpoolReader }>;
  pumping?: Promise<void>;
}

export function createTranscript(options: TranscriptOptions): Transcript {
  const { report, sessionId, root } = options;
  const queue = new ByteQueue();
  const controller = new AbortController();
  let acked = 0;
  let spool: Spool | undefined;
  /** sending → (stopped: the server refuses; bytes are still spooled) | dropped (v1 server) | broken (spool failed). */
  let status: "sending" | "stopped" | "dropped" | "broken" = "sending";
  let why = "";
  let ending = false;
  let markEnding = () => {};
  const endingSignal = new Promise<void>((resolve) => (markEnding = resolve));
  let onWrite: (() => void) | undefined;
  /** When `write` was last called (performance.now()). */
  let lastWrite = -Infinity;
  /** The writer waits while the spool is behind: resolved once it caught up to half the limit. */
  let behind: { promise: Promise<void>; resolve: () => void } | undefined;
  const caughtUp = () => {
    behind?.resolve();
    behind = undefined;
  };
  /** What the append under way sends (`source.read` fills it; an append ends before the next read). */
  let sendBuffer: Buffer | undefined;
  /** Cuts short the one retry wait under way when input ends, not every wait after it. */
  const wakeAtEnd = () => (ending ? new Promise<void>(() => {}) : endingSignal);

  const source: TranscriptSource = {
    get from() {
      return spool ? spool.base : queue.start;
    },
    get end() {
      return queue.end;
    },
    async read(from, max) {
      // One buffer for every append: a fresh 8 MiB each time costs more than sending it.
      if (sendBuffer === undefined || sendBuffer.length < max) sendBuffer = Buffer.allocUnsafeSlow(max);
      if (from >= queue.start) return queue.read(from, max, sendBuffer);
      const { reader } = await spool!.ready;
      return reader.read(from, max, sendBuffer);
    },
  };

  function startSpooling(reason: string): void {
    if (spool) return;
    report.debug("transcript", `spooling the transcript to .uspark/${spoolDataName(sessionId)} (${reason})`);
    const base = queue.start;
    spool = {
      base,
      written: base,
      ready: (async () => {
        const handle = await openSpoolForAppend(root, sessionId);
        await handle.truncate(0);
        await writeSpoolMeta(root, { ...metaNow(), base, pid: process.pid });
        const reader = (await SpoolReader.open(root, sessionId, base))!;
        return { handle, reader };
      })(),
    };
    pump();
  }

  /** Moves the queue's bytes into the spool file, one write at a time. */
  function pump(): void {
    const current = spool;
    const broken = () => status === "broken";
    if (!current || current.pumping || broken()) return;
    current.pumping = (async () => {
      try {
        const { handle, reader } = await current.ready;
        while (current.written < queue.end && !broken()) {
          const pieces = queue.pieces(current.written, 8 * 1024 * 1024);
          const { bytesWritten } = await handle.writev(pieces); // a regular file: all of it, or an error
          current.written += bytesWritten;
          reader.end = current.written;
          queue.dropTo(current.written);
          if (queue.size <= MEMORY_LIMIT / 2) caughtUp();
        }
      } catch (error) {
        breakSpool(`cannot write the spool: ${(error as Error).message}`);
      } finally {
        current.pumping = undefined;
      }
    })();
  }

  function breakSpool(reason: string): void {
    if (status === "broken") return;
    status = "broken";
    why = reason;
    queue.dropTo(queue.end);
    caughtUp();
    onWrite?.();
  }

  function metaNow(): SpoolMeta {
    return { apiUrl: options.apiUrl, projectId: options.projectId, sessionId, base: spool?.base ?? queue.start, acked };
  }

  const sending = new Promise<void>((resolve) => setImmediate(resolve)).then(send);

  async function send(): Promise<void> {
    // Loaded here, not at start-up: only --transcript needs it (the client is every command's).
    const upload = await import("./upload.js");
    const client = new ApiClient({ ...options, connections: 1 });
    let lastSend = -Infinity;
    try {
      while (status === "sending") {
        const waiting = queue.end - acked;
        if (waiting === 0) {
          if (ending) return;
          await new Promise<void>((resolve) => (onWrite = resolve));
          continue;
        }
        if (!ending) await sleep(lastSend + BATCH_MS - performance.now(), controller.signal, endingSignal);
        // Spooled: the agent outran the sender, which now waits for it to pause.
        while (spool && !ending && performance.now() - lastWrite < BATCH_MS) {
          await sleep(lastWrite + BATCH_MS - performance.now(), controller.signal, endingSignal);
        }
        acked = await upload.appendNext(source, acked, {
          client,
          sessionId,
          signal: controller.signal,
          backoff: options.backoff,
          wake: wakeAtEnd,
          onRetry: (error, delayMs) => {
            why = (error as Error).message;
            report.debug("transcript", `${why}; trying again in ${delayMs} ms`);
            startSpooling("the server did not answer");
          },
        });
        lastSend = performance.now();
        if (!spool) queue.dropTo(acked);
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error instanceof upload.TranscriptsNotSupported) {
        status = "dropped";
        report.info("transcript", `${error.message}: this session's transcript is not sent`);
        queue.dropTo(queue.end);
        return;
      }
      status = "stopped";
      why = (error as Error).message;
      report.warn("transcript", `transcript not sent: ${why}`);
      startSpooling("sending stopped");
    } finally {
      await client.close();
    }
  }

  async function settle(): Promise<TranscriptResult> {
    await sending.catch((error: unknown) => {
      why = `internal error: ${(error as Error).message}`;
    });
    const result = (state: TranscriptResult["state"]): TranscriptResult => ({ sessionId, bytes: queue.end, sent: acked, state });
    if (status === "dropped") {
      if (spool) await closeSpool(spool).then(() => removeSpool(root, sessionId));
      return result("not-supported");
    }
    if (status !== "broken" && acked === queue.end) {
      if (spool) await closeSpool(spool).then(() => removeSpool(root, sessionId));
      if (queue.end > 0) report.info("transcript", `transcript sent: ${queue.end} bytes as session ${sessionId}`);
      return result("sent");
    }
    startSpooling("the end came first");
    const current = spool!;
    try {
      while (current.pumping) await current.pumping;
      await closeSpool(current);
      if (status !== "broken") await writeSpoolMeta(root, metaNow());
    } catch (error) {
      breakSpool(`cannot write the spool: ${(error as Error).message}`);
    }
    const file = `.uspark/${spoolDataName(sessionId)}`;
    const unsent = queue.end - acked;
    if (status === "broken") {
      report.error("transcript", `transcript: ${unsent} of ${queue.end} bytes not sent, and ${why}; ${file} keeps the stream up to byte ${current.written}`);
      return result("truncated");
    }
    report.error(
      "transcript",
      `transcript: ${unsent} of ${queue.end} bytes not sent (${why || "time ran out"}); kept in ${file}: run \`uspark push --pending\` to send them`,
      { sessionId, unsent, spool: file },
    );
    return result("spooled");
  }

  let settled: Promise<TranscriptResult> | undefined;
  return {
    write(chunk) {
      if (status === "dropped" || status === "broken" || ending) return;
      queue.push(chunk);
      lastWrite = performance.now();
      if (!spool && queue.size > MEMORY_LIMIT) startSpooling(`over ${MEMORY_LIMIT} bytes unsent`);
      else if (spool && queue.size > HARD_LIMIT) breakSpool("the disk did not keep up with the stream");
      else if (spool) pump();
      onWrite?.();
      onWrite = undefined;
      if (queue.size > MEMORY_LIMIT) {
        if (!behind) {
          let resolve = () => {};
          behind = { promise: new Promise<void>((r) => (resolve = r)), resolve };
        }
        return behind.promise;
      }
    },
    end(timeoutMs) {
      if (settled) return settled;
      ending = true;
      caughtUp();
      markEnding();
      onWrite?.();
      const timer = setTimeout(() => {
        why ||= `not all sent within ${timeoutMs} ms`;
        controller.abort();
      }, timeoutMs);
      settled = settle().finally(() => clearTimeout(timer));
      return settled;
    },
    abort() {
      ending = true;
      caughtUp();
      markEnding();
      why ||= "interrupted";
      controller.abort();
      settled ??= settle();
      return settled;
    },
  };
}

async function closeSpool(spool: Spool): Promise<void> {
  const opened = await spool.ready.catch(() => undefined); // a failed open was reported already
  await opened?.handle.close();
  await opened?.reader.close();
}
