import type { Readable, Writable } from "node:stream";
import { EXIT, signalExitCode } from "../util/exit-codes.js";
import { isReaderGone, type Reporter } from "../report/reporter.js";
import { passthroughOf } from "../stream/early-copy.js";
import type { Watcher } from "../watcher/watcher.js";
import { errorText } from "../errors/text.js";

/**
 * One watch session, shared by `uspark watch`, `watch --no-stdin` and `uspark run`: the agent's
 * stream passed through to our stdout while the watcher reads a copy, the signals, the final
 * flush, and the exit code.
 *
 * Signals (SIGINT, SIGTERM, SIGHUP: a closed terminal or a dropped ssh is an end like any other):
 * the first ends the session as the end of input would (watch), or is passed on to the agent
 * whose exit then ends it (run); the sync is flushed within --timeout and what is left is
 * journaled. A second signal journals at once and exits with 128+n.
 */
const SESSION_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const satisfies readonly NodeJS.Signals[];

export interface SessionOptions {
  watcher: Watcher;
  report: Reporter;
  /** The agent's stream; none with --no-stdin, when only a signal ends the session. */
  input?: Readable;
  output: Writable;
  /** Sees each chunk of the input as the watcher does (only during the call: the buffer is reused). */
  tap?: (chunk: Buffer) => void;
  /**
   * `uspark run`: a signal goes to the agent, and the session ends with the agent's output.
   * False when the agent is gone already: the signal then ends the session itself.
   */
  forwardSignal?(signal: NodeJS.Signals): boolean;
  /**
   * Resolves when the session is to end as if its input had: `uspark run`, the agent exited and a
   * process it left still holds its stdout past the grace; a daemon, syncing stopped for good.
   */
  endEarly?: Promise<void>;
}

export interface SessionEnd {
  /** 0 or 1 from the sync; 74 when writing stdout failed (not EPIPE); 128+n after a second signal n. */
  exitCode: number;
  /** Ended by a second signal: the caller must not wait for anything more. */
  aborted: boolean;
}

export function runSession(options: SessionOptions): Promise<SessionEnd> {
  const { watcher, report } = options;
  return new Promise<SessionEnd>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      const passedOn = options.forwardSignal?.(signal) === true;
      if (signals > 1) {
        void watcher.abort().then(() => resolve({ exitCode: signalExitCode(signal), aborted: true }));
        return;
      }
      const then = passedOn ? "passed on to the agent; pushing what is pending when it exits" : "pushing what is pending, then exiting";
      report.info("signal", `${signal}: ${then} (again to stop at once)`);
      if (!passedOn) stream.stop();
    };
    for (const signal of SESSION_SIGNALS) process.on(signal, onSignal);
    // After the handlers: an early copy hands over what it read at once, and what is seen in it
    // (a "detected" line) may be answered with a signal straight away.
    const stream = options.input ? passThrough(options) : waitForSignal();
    void options.endEarly?.then(() => stream.stop());

    void (async () => {
      let syncCode: number;
      try {
        // Sync's last flush need not wait for a slow reader of stdout; the exit does.
        await Promise.race([stream.ended, stream.done]);
        [{ exitCode: syncCode }] = await Promise.all([watcher.end(), stream.done]);
      } catch (error) {
        report.error("input", `reading the agent's output failed: ${errorText(error)}`);
        syncCode = (await watcher.end()).exitCode;
      }
      if (signals < 2) resolve({ exitCode: stream.outputFailed() ? EXIT.outputError : syncCode, aborted: false });
    })();
  });
}

interface SessionStream {
  ended: Promise<void>;
  done: Promise<void>;
  stop(): void;
  outputFailed(): boolean;
}

function passThrough({ input, output, watcher, report, tap }: SessionOptions): SessionStream {
  let failed = false;
  const stream = passthroughOf({
    input: input!,
    output,
    onChunk: tap ? (chunk) => (tap(chunk), watcher.write(chunk)) : (chunk) => watcher.write(chunk),
    onOutputError: (error) => {
      const why = error.code ?? error.message;
      if (isReaderGone(error)) return report.debug("stdout-closed", `stdout closed (${why}); still reading the agent's output and syncing`);
      failed = true;
      report.error(
        "stdout",
        `writing stdout failed (${why}): the agent's output from here on is lost; still syncing, exit code ${EXIT.outputError}`,
      );
    },
  });
  return { ended: stream.ended, done: stream.done, stop: () => stream.stop(), outputFailed: () => failed };
}

/** No stream (--no-stdin): the session lasts until a signal. */
function waitForSignal(): SessionStream {
  // The file watcher does not hold the process open (a stream did, until now): this does.
  const keepAlive = setInterval(() => {}, 1 << 30);
  let stop = () => {};
  const ended = new Promise<void>((resolve) => (stop = resolve)).then(() => clearInterval(keepAlive));
  return { ended, done: ended, stop: () => stop(), outputFailed: () => false };
}
