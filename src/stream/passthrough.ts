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

export function passthrough({ input, output, onChunk, onOutputError }: PassthroughOptions): Passthrough {
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

    output.on("error", (error: NodeJS.ErrnoException) => {
      if (!outputOpen) return;
      outputOpen = false;
      onOutputError?.(error);
      if (waitingForDrain) resumeInput();
      finishIfEnded();
    });
    output.on("drain", () => {
      if (waitingForDrain) resumeInput();
    });

    input.on("data", (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      if (outputOpen) {
        unwritten++;
        if (!output.write(bytes, onWritten) || (inPlace && output.writableLength > 0)) {
          waitingForDrain = true;
          input.pause();
        }
      }
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
