import type { Reporter } from "../report/reporter.js";
import { ApiClient } from "../transfer/client.js";
import { sleep, type BackoffPolicy } from "../transfer/retry.js";
import { deferred, type Deferred } from "../util/deferred.js";
import { ByteQueue } from "./queue.js";
import { removeSpool, spoolDataName, writeSpoolMeta, type SpoolMeta } from "./spool.js";
import { SpoolWriter } from "./spool-writer.js";
import type { AppendOptions, TranscriptSource } from "./upload.js";
import { errorText } from "../errors/text.js";

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

export function createTranscript(options: TranscriptOptions): Transcript {
  return new Recorder(options);
}

type Upload = typeof import("./upload.js");

/** sending → (stopped: the server refuses; bytes are still spooled) | dropped (v1 server) | broken (spool failed). */
type Status = "sending" | "stopped" | "dropped" | "broken";

class Recorder implements Transcript {
  private readonly queue = new ByteQueue();
  private readonly controller = new AbortController();
  private spool: SpoolWriter | undefined;
  private readonly bytes = new RecordedBytes(this.queue, () => this.spool);
  /** Bytes the server acknowledged. */
  private acked = 0;
  private status: Status = "sending";
  private why = "";
  private ending = false;
  private markEnding = () => {};
  private readonly endingSignal = new Promise<void>((resolve) => (this.markEnding = resolve));
  /** Opened by each write: the sender waits on it when everything is sent. */
  private readonly wrote = new Gate();
  /** Opened once the spool caught up: the writer waits on it while the spool is behind. */
  private readonly caughtUp = new Gate();
  /** When `write` was last called (performance.now()). */
  private lastWrite = -Infinity;
  private readonly sending: Promise<void>;
  private settled: Promise<TranscriptResult> | undefined;

  constructor(private readonly options: TranscriptOptions) {
    this.sending = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send());
  }

  write(chunk: Uint8Array): void | Promise<void> {
    if (this.status === "dropped" || this.status === "broken" || this.ending) return;
    const { queue } = this;
    queue.push(chunk);
    this.lastWrite = performance.now();
    if (!this.spool && queue.size > MEMORY_LIMIT) this.startSpooling(`over ${MEMORY_LIMIT} bytes unsent`);
    else if (this.spool && queue.size > HARD_LIMIT) this.breakSpool("the disk did not keep up with the stream");
    else this.spool?.pump();
    this.wrote.open();
    if (queue.size > MEMORY_LIMIT) return this.caughtUp.wait();
  }

  end(timeoutMs: number): Promise<TranscriptResult> {
    if (this.settled) return this.settled;
    this.stopWriting();
    const timer = setTimeout(() => {
      this.why ||= `not all sent within ${timeoutMs} ms`;
      this.controller.abort();
    }, timeoutMs);
    this.settled = this.settle().finally(() => clearTimeout(timer));
    return this.settled;
  }

  abort(): Promise<TranscriptResult> {
    this.stopWriting();
    this.why ||= "interrupted";
    this.controller.abort();
    this.settled ??= this.settle();
    return this.settled;
  }

  private stopWriting(): void {
    this.ending = true;
    this.caughtUp.open();
    this.markEnding();
    this.wrote.open();
  }

  private async send(): Promise<void> {
    // Loaded here, not at start-up: only --transcript needs it (the client is every command's).
    const upload = await import("./upload.js");
    const client = new ApiClient({ ...this.options, connections: 1 });
    try {
      // The first append waits too: a burst at the start goes to the spool, not at once to the server.
      let lastSend = performance.now();
      while (this.status === "sending") {
        if (this.queue.end === this.acked) {
          if (this.ending) return;
          await this.wrote.wait();
          continue;
        }
        await this.paced(lastSend);
        this.acked = await upload.appendNext(this.bytes, this.acked, this.appendOptions(client));
        lastSend = performance.now();
        if (!this.spool) this.queue.dropTo(this.acked);
      }
    } catch (error) {
      this.sendingFailed(error, upload);
    } finally {
      await client.close();
    }
  }

  /** While input lasts: one append per BATCH_MS, and once spooled (the agent outran us) only in the agent's pauses. */
  private async paced(lastSend: number): Promise<void> {
    const { signal } = this.controller;
    if (!this.ending) await sleep(lastSend + BATCH_MS - performance.now(), signal, this.endingSignal);
    while (this.spool && !this.ending && performance.now() - this.lastWrite < BATCH_MS) {
      await sleep(this.lastWrite + BATCH_MS - performance.now(), signal, this.endingSignal);
    }
  }

  private appendOptions(client: ApiClient): AppendOptions {
    const { options } = this;
    return {
      client,
      sessionId: options.sessionId,
      signal: this.controller.signal,
      backoff: options.backoff,
      // Cuts short the one retry wait under way when input ends, not every wait after it.
      wake: () => (this.ending ? new Promise<void>(() => {}) : this.endingSignal),
      onRetry: (error, delayMs) => {
        this.why = errorText(error);
        options.report.debug("transcript", `${this.why}; trying again in ${delayMs} ms`);
        this.startSpooling("the server did not answer");
      },
    };
  }

  private sendingFailed(error: unknown, upload: Upload): void {
    const { report } = this.options;
    if (this.controller.signal.aborted) return;
    if (error instanceof upload.TranscriptsNotSupported) {
      this.status = "dropped";
      report.info("transcript", `${error.message}: this session's transcript is not sent`);
      this.queue.dropTo(this.queue.end);
      this.caughtUp.open();
      return;
    }
    this.status = "stopped";
    this.why = errorText(error);
    report.warn("transcript", `transcript not sent: ${this.why}`);
    this.startSpooling("sending stopped");
  }

  private startSpooling(reason: string): void {
    if (this.spool) return;
    const { root, sessionId, report } = this.options;
    report.debug("transcript", `spooling the transcript to .uspark/${spoolDataName(sessionId)} (${reason})`);
    this.spool = SpoolWriter.start(root, sessionId, () => this.meta(), this.queue, {
      moved: () => {
        if (this.caughtUp.waiting && this.queue.size <= MEMORY_LIMIT / 2) this.caughtUp.open();
      },
      failed: (why) => this.breakSpool(why),
      // Dropped too: the queue was emptied under a move that may still be under way.
      stopped: () => this.status === "broken" || this.status === "dropped",
    });
  }

  private breakSpool(reason: string): void {
    if (this.status === "broken") return;
    this.status = "broken";
    this.why = reason;
    this.queue.dropTo(this.queue.end);
    this.caughtUp.open();
    this.wrote.open();
  }

  private meta(): SpoolMeta {
    const { apiUrl, projectId, sessionId } = this.options;
    return { apiUrl, projectId, sessionId, base: this.spool?.base ?? this.queue.start, acked: this.acked };
  }

  private async settle(): Promise<TranscriptResult> {
    const { root, sessionId, report } = this.options;
    await this.sending.catch((error: unknown) => {
      this.why = `internal error: ${errorText(error)}`;
    });
    // Nothing left for the spool to keep: it goes.
    const discardSpool = async () => {
      if (this.spool) await this.spool.close().then(() => removeSpool(root, sessionId));
    };
    if (this.status === "dropped") {
      await discardSpool();
      return this.result("not-supported");
    }
    if (this.status !== "broken" && this.acked === this.queue.end) {
      await discardSpool();
      if (this.queue.end > 0) report.info("transcript", `transcript sent: ${this.queue.end} bytes as session ${sessionId}`);
      return this.result("sent");
    }
    return this.spoolTheRest();
  }

  /** What the server does not have stays in the spool, for `push --pending`. */
  private async spoolTheRest(): Promise<TranscriptResult> {
    const { root, sessionId, report } = this.options;
    this.startSpooling("the end came first");
    const spool = this.spool!;
    try {
      await spool.drained();
      await spool.close();
      if (this.status !== "broken") await writeSpoolMeta(root, this.meta());
    } catch (error) {
      this.breakSpool(`cannot write the spool: ${errorText(error)}`);
    }
    const file = `.uspark/${spoolDataName(sessionId)}`;
    const unsent = this.queue.end - this.acked;
    if (this.status === "broken") {
      report.error(
        "transcript",
        `transcript: ${unsent} of ${this.queue.end} bytes not sent, and ${this.why}; ${file} keeps the stream up to byte ${spool.written}`,
      );
      return this.result("truncated");
    }
    report.error(
      "transcript",
      `transcript: ${unsent} of ${this.queue.end} bytes not sent (${this.why || "time ran out"}); kept in ${file}: run \`uspark push --pending\` to send them`,
      { sessionId, unsent, spool: file },
    );
    return this.result("spooled");
  }

  private result(state: TranscriptResult["state"]): TranscriptResult {
    return { sessionId: this.options.sessionId, bytes: this.queue.end, sent: this.acked, state };
  }
}

/** What appends read: the memory queue, and before its start the spool file. */
class RecordedBytes implements TranscriptSource {
  /** One buffer for every append: a fresh 8 MiB each time costs more than sending it. */
  private buffer: Buffer | undefined;

  constructor(
    private readonly queue: ByteQueue,
    private readonly spool: () => SpoolWriter | undefined,
  ) {}

  get from(): number {
    return this.spool()?.base ?? this.queue.start;
  }

  get end(): number {
    return this.queue.end;
  }

  /** Valid until the next read: an append ends before the next one reads. */
  async read(from: number, max: number): Promise<Buffer> {
    if (this.buffer === undefined || this.buffer.length < max) this.buffer = Buffer.allocUnsafeSlow(max);
    if (from >= this.queue.start) return this.queue.read(from, max, this.buffer);
    const { reader } = await this.spool()!.ready;
    return reader.read(from, max, this.buffer);
  }
}

/** A promise made by the first `wait` and settled by `open`; the next `wait` makes a new one. */
class Gate {
  private pending: Deferred | undefined;

  /** Someone waits on it. */
  get waiting(): boolean {
    return this.pending !== undefined;
  }

  wait(): Promise<void> {
    return (this.pending ??= deferred()).promise;
  }

  open(): void {
    this.pending?.resolve();
    this.pending = undefined;
  }
}
