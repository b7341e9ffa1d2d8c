import { isReaderGone } from "../report/reporter.js";

/**
 * stdout for the commands whose answer is data (status, diff, log, ls, cat): each write resolved
 * once taken, so exit() loses none of it. A reader that went away (`uspark cat x | head`) is its
 * choice: the rest is dropped quietly. Any other write error is remembered (exit 74).
 */

let failure: NodeJS.ErrnoException | undefined;
let listening = false;

export function writeStdout(data: string | Uint8Array): Promise<void> {
  if (!listening) {
    // Without a listener, an EPIPE is an unhandled 'error' event: a crash with a stack trace.
    process.stdout.on("error", (error: NodeJS.ErrnoException) => (failure ??= error));
    listening = true;
  }
  if (failure) return Promise.resolve();
  return new Promise((resolve) => {
    process.stdout.write(data, (error) => {
      if (error) failure ??= error;
      resolve();
    });
  });
}

/** A write to stdout failed for a reason other than a closed pipe (ENOSPC, EIO). */
export function stdoutFailed(): boolean {
  return failure !== undefined && !isReaderGone(failure);
}
