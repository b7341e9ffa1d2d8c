import { writeSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { readsInPlace } from "./stdin.js";
import { errorCode } from "../errors/text.js";

/**
 * Copies input to output byte for byte, with backpressure, and hands each chunk to `onChunk`
 * after it was written: detection sees the same bytes but can never hold them up. Only a sink
 * that must (the transcript, its spool behind a fast agent) returns a promise: no more is read
 * until it settles. If writing the output fails (its reader went away: EPIPE, `| head -1`; or a
 * full disk: ENOSPC, EIO), output stops and input is still read to the end, so detection and
 * sync go on. What the failure means (quiet for EPIPE, an error otherwise) is the caller's
 * call: `onOutputError`.
 */
export interface PassthroughOptions {
  input: Readable;
  output: Writable;
  /** A promise: read no more until it settles (the chunk is taken already). */
  onChunk(chunk: Buffer): void | Promise<void>;
  /** Called once when writing the output failed; nothing more is written to it. */
  onOutputError?(error: NodeJS.ErrnoException): void;
  /**
   * Writes to what `output` writes to, at once, as write(2) on its descriptor does: returns how
   * many bytes it took, throws EAGAIN when it would take none now (a full pipe). Used while it
   * takes the bytes; the rest goes through `output`, and until `output` has written it so does
   * every later chunk, so that nothing is written out of order. Default: write(2) on stdout's
   * descriptor when `output` is process.stdout; none otherwise.
   */
  writeNow?: (bytes: Buffer, from: number) => number;
}

export interface Passthrough {
  /** Resolves when input has ended, or `stop` was called. */
  ended: Promise<void>;
  /** Resolves when input has ended (or `stop` was called) and all output has left the process. */
  done: Promise<void>;
  /** Stop reading input (a signal); `done` resolves once what was read is written. */
  stop(): void;
  /** Read no more until `until` settles, whatever the output does (an early copy's limit). */
  holdUntil(until: Promise<void>): void;
}

export function passthrough(options: PassthroughOptions): Passthrough {
  return new Copy(options);
}

/** One passthrough: each event of the input and the output is a method, the state they share is its fields. */
class Copy implements Passthrough {
  readonly ended: Promise<void>;
  readonly done: Promise<void>;
  private markEnded = () => {};
  private markDone = () => {};
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly onChunk: PassthroughOptions["onChunk"];
  private readonly onOutputError: PassthroughOptions["onOutputError"];
  private readonly writeNow: PassthroughOptions["writeNow"];
  /** The input hands out views of one buffer that its next read overwrites. */
  private readonly inPlace: boolean;
  private outputOpen = true;
  private waitingForDrain = false;
  /** Writes handed to the stream and not yet to the OS: 'drain' alone does not say when the last one is. */
  private unwritten = 0;
  private inputEnded = false;
  /** Promises that hold the input (`holdUntil`) not yet settled. */
  private holds = 0;

  constructor({ input, output, onChunk, onOutputError, writeNow = stdoutWrite(output) }: PassthroughOptions) {
    this.input = input;
    this.output = output;
    this.onChunk = onChunk;
    this.onOutputError = onOutputError;
    this.writeNow = writeNow;
    this.inPlace = readsInPlace(input);
    this.ended = new Promise<void>((resolve) => (this.markEnded = resolve));
    this.done = new Promise<void>((resolve, reject) => {
      this.markDone = resolve;
      input.once("error", reject);
    });
    output.on("error", (error: NodeJS.ErrnoException) => this.outputFailed(error));
    output.on("drain", () => {
      if (this.waitingForDrain) this.resumeInput();
    });
    input.on("data", (chunk: Buffer | string) => this.take(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    input.once("end", () => {
      this.inputEnded = true;
      this.finishIfEnded();
    });
    // An input read in place starts paused.
    if (this.inPlace) input.resume();
  }

  stop(): void {
    this.input.pause();
    this.inputEnded = true;
    this.finishIfEnded();
  }

  holdUntil(until: Promise<void>): void {
    this.holds++;
    this.input.pause();
    const release = () => {
      this.holds--;
      if (!this.waitingForDrain) this.resumeInput();
    };
    until.then(release, release);
  }

  private take(bytes: Buffer): void {
    if (this.outputOpen) this.write(bytes);
    const wait = this.onChunk(bytes);
    if (wait instanceof Promise) this.holdUntil(wait);
  }

  /** Writes what `writeNow` takes (when nothing waits in the stream before it), the rest through the stream. */
  private write(bytes: Buffer): void {
    let from = 0;
    if (this.writeNow !== undefined && this.unwritten === 0) {
      try {
        while (from < bytes.length) from += this.writeNow(bytes, from);
        return;
      } catch (error) {
        if (errorCode(error) !== "EAGAIN") return this.outputFailed(error as NodeJS.ErrnoException);
      }
    }
    this.unwritten++;
    const { output } = this;
    if (!output.write(from === 0 ? bytes : bytes.subarray(from), () => this.written()) || (this.inPlace && output.writableLength > 0)) {
      this.waitingForDrain = true;
      this.input.pause();
    }
  }

  private written(): void {
    this.unwritten--;
    // Its buffer is free again once nothing written is held: no 'drain' comes when write() said true.
    if (this.waitingForDrain && this.inPlace && this.output.writableLength === 0) this.resumeInput();
    this.finishIfEnded();
  }

  private outputFailed(error: NodeJS.ErrnoException): void {
    if (!this.outputOpen) return;
    this.outputOpen = false;
    this.onOutputError?.(error);
    if (this.waitingForDrain) this.resumeInput();
    this.finishIfEnded();
  }

  private resumeInput(): void {
    this.waitingForDrain = false;
    if (!this.inputEnded && this.holds === 0) this.input.resume(); // not after stop()
  }

  /** Done when input has ended and everything written has left the process. */
  private finishIfEnded(): void {
    if (!this.inputEnded) return;
    this.markEnded();
    if (!this.outputOpen || this.unwritten === 0) this.markDone();
  }
}

/**
 * write(2) on stdout's descriptor when `output` is process.stdout: a chunk is then written with
 * one system call, without the stream's machinery and the callbacks it schedules for every write
 * (3,200 of them for a 200 MiB session; `npm run bench`, throughput). Node leaves stdout
 * non-blocking on a pipe, so a slow reader makes it throw EAGAIN, not wait. Not tried on Windows.
 */
function stdoutWrite(output: Writable): PassthroughOptions["writeNow"] {
  if (output !== process.stdout || process.platform === "win32") return undefined;
  return (bytes, from) => writeSync(1, bytes, from);
}
