import { isatty } from "node:tty";
import { UsageError } from "../../config/config.js";
import { EXIT } from "../../util/exit-codes.js";
import { errorCode } from "../../errors/text.js";
import { Reporter, stderrFailure, stderrOutput } from "../../report/reporter.js";
import { passthroughOf } from "../../stream/early-copy.js";
import { agentStdin } from "../../stream/stdin.js";

/** How every command ends: its exit code, its usage errors, its stdout written to the end. */

/** Text for the user's shell on stdout (`uspark completion`): a failed write is exit 74 (EXIT.outputError), a closed pipe is not. */
export async function printToStdout(text: string): Promise<void> {
  const failure = await new Promise<Error | null | undefined>((resolve) => {
    process.stdout.once("error", resolve);
    process.stdout.write(text, resolve);
  });
  if (!failure || errorCode(failure) === "EPIPE") return exit(EXIT.ok);
  new Reporter().error("output", `writing stdout failed: ${failure.message}`);
  exit(EXIT.outputError);
}

/** Paths are resolved against the current directory: one that was deleted under us is a usage error, not a crash. */
export function checkWorkingDirectory(): void {
  try {
    process.cwd();
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
    throw new UsageError(
      "the current directory no longer exists (it was deleted or replaced)",
      'cd into the project again, e.g. cd "$PWD"',
    );
  }
}

export function usageFailure(report: Reporter, error: unknown): void {
  if (!(error instanceof UsageError)) throw error;
  report.error("usage", error.hint ? `${error.message} (${error.hint})` : error.message);
  exit(EXIT.usage);
}

/**
 * A usage or configuration error in the pipe form (`agent | uspark watch`): said at once, then
 * stdin is still copied to stdout to its end before exit 2, so that the agent upstream is not
 * killed by SIGPIPE and none of its output is lost. A terminal on stdin is not waited for.
 */
export async function pipeUsageFailure(report: Reporter, error: unknown): Promise<void> {
  if (!(error instanceof UsageError)) throw error;
  report.error("usage", error.hint ? `${error.message} (${error.hint})` : error.message);
  await copyStdinThrough();
  exit(EXIT.usage);
}

/** Stdin to stdout to the end (a closed stdout is no reason to stop reading); nothing else. */
export async function copyStdinThrough(): Promise<void> {
  if (isatty(0)) return;
  await passthroughOf({ input: agentStdin(), output: process.stdout, onChunk: () => {}, onOutputError: () => {} }).done.catch(
    () => undefined,
  );
}

/**
 * Exit once stderr has taken our last words; stdout was drained before we got here. A failed
 * stderr (not EPIPE) makes a clean exit code an output error: words were lost.
 */
export function exit(code: number): void {
  const final = code === EXIT.ok && stderrFailure() ? EXIT.outputError : code;
  process.exitCode = final;
  if (stderrOutput().state !== "open") process.exit(final);
  else process.stderr.write("", () => process.exit(final));
}
