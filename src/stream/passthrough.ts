import { writeSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { readsInPlace } from "./stdin.js";

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

export function passthrough({ input, output, onChunk, onOutputError, writeNow = stdoutWrite(output) }: PassthroughOptions): Passthrough {
  let stop = () => {};
  let holdUntil = (_until: Promise<void>) => {};
  let markEnded = () => {};
  const ended = new Promise<void>((resolve) => (markEnded = resolve));
  const done = new Promise<void>((resolve, reject) => {
    let outputOpen = true;
    let waitingForDrain = false;
    /** Writes not yet handed to the OS: 'drain' alone does not say when the last one is. */
    let unwritten = 0;
    let inputEnded = false;
    /** Promises that hold the input (`holdUntil`) not yet settled. */
    let holds = 0;
    const inPlace = readsInPlace(input);
    const onWritten = () => {
      unwritten--;
      // Its buffer is free again once nothing written is held: no 'drain' comes when write() said true.
      if (waitingForDrain && inPlace && output.writableLength === 0) resumeInput();
      finishIfEnded();
    };

    const resumeInput = () => {
      waitingForDrain = false;
      if (!inputEnded && holds === 0) input.resume(); // not after stop()
    };

    const outputFailed = (error: NodeJS.ErrnoException) => {
      if (!outputOpen) return;
      outputOpen = false;
      onOutputError?.(error);
      if (waitingForDrain) resumeInput();
      finishIfEnded();
    };
    output.on("error", outputFailed);
    output.on("drain", () => {
      if (waitingForDrain) resumeInput();
    });

    /** Writes what `writeNow` takes (when nothing waits in the stream before it), the rest through the stream. */
    const write = (bytes: Buffer) => {
      let from = 0;
      if (writeNow !== undefined && unwritten === 0) {
        try {
          while (from < bytes.length) from += writeNow(bytes, from);
          return;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return outputFailed(error as NodeJS.ErrnoException);
        }
      }
      unwritten++;
      if (!output.write(from === 0 ? bytes : bytes.subarray(from), onWritten) || (inPlace && output.writableLength > 0)) {
        waitingForDrain = true;
        input.pause();
      }
    };

    input.on("data", (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      if (outputOpen) write(bytes);
      const wait = onChunk(bytes);
      if (wait instanceof Promise) holdUntil(wait);
    });
    // An input read in place starts paused.
    if (inPlace) input.resume();

    input.once("end", () => {
      inputEnded = true;
      finishIfEnded();
    });
    input.once("error", reject);
    stop = () => {
      input.pause();
      inputEnded = true;
      finishIfEnded();
    };
    holdUntil = (until) => {
      holds++;
      input.pause();
      const release = () => {
        holds--;
        if (!waitingForDrain) resumeInput();
      };
      until.then(release, release);
    };

    /** Done when input has ended and everything written has left the process. */
    function finishIfEnded(): void {
      if (inputEnded) markEnded();
      if (inputEnded && (!outputOpen || unwritten === 0)) resolve();
    }
  });
  return { ended, done, stop: () => stop(), holdUntil: (until) => holdUntil(until) };
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
