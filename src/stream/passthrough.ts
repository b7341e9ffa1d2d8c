import type { Readable, Writable } from "node:stream";
import { readsInPlace } from "./stdin.js";

/**
 * Copies input to output byte for byte, with backpressure, and hands each chunk to `onChunk`
 * after it was written: detection sees the same bytes but can never hold them up. If writing
 * the output fails (its reader went away: EPIPE, `| head -1`; or a full disk: ENOSPC, EIO),
 * output stops and input is still read to the end, so detection and sync go on. What the
 * failure means (quiet for EPIPE, an error otherwise) is the caller's call: `onOutputError`.
 */
export interface PassthroughOptions {
  input: Readable;
  output: Writable;
  onChunk(chunk: Buffer): void;
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
  /** Read no more until `hold(false)`, whatever the output does (an early copy's limit). */
  hold(on: boolean): void;
}

export function passthrough({ input, output, onChunk, onOutputError }: PassthroughOptions): Passthrough {
  let stop = () => {};
  let hold = (_on: boolean) => {};
  let markEnded = () => {};
  const ended = new Promise<void>((resolve) => (markEnded = resolve));
  const done = new Promise<void>((resolve, reject) => {
    let outputOpen = true;
    let waitingForDrain = false;
    /** Writes not yet handed to the OS: 'drain' alone does not say when the last one is. */
    let unwritten = 0;
    let inputEnded = false;
    let held = false;
    const inPlace = readsInPlace(input);
    const onWritten = () => {
      unwritten--;
      // Its buffer is free again once nothing written is held: no 'drain' comes when write() said true.
      if (waitingForDrain && inPlace && output.writableLength === 0) resumeInput();
      finishIfEnded();
    };

    const resumeInput = () => {
      waitingForDrain = false;
      if (!inputEnded && !held) input.resume(); // not after stop()
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
      onChunk(bytes);
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
    hold = (on) => {
      held = on;
      if (on) input.pause();
      else if (!waitingForDrain) resumeInput();
    };

    /** Done when input has ended and everything written has left the process. */
    function finishIfEnded(): void {
      if (inputEnded) markEnded();
      if (inputEnded && (!outputOpen || unwritten === 0)) resolve();
    }
  });
  return { ended, done, stop: () => stop(), hold: (on) => hold(on) };
}
