import os from "node:os";

/**
 * Every exit code uspark uses, in one place (docs/commands.md#exit-codes-and-signals lists the same).
 * `uspark run` also passes on the agent's own non-zero code, or 128+n when it died of signal n.
 */
export const EXIT = {
  /** Everything synced. */
  ok: 0,
  /** Some changes not synced (listed, journaled); or push refused a mass delete without --force. */
  notSynced: 1,
  /** Bad usage or configuration. */
  usage: 2,
  /** Internal error (a bug). */
  internal: 70,
  /** Writing our output failed (stdout or stderr: ENOSPC, EIO; not EPIPE). sysexits' EX_IOERR. */
  outputError: 74,
  /** `uspark run`: the agent command exists but cannot be executed. */
  cannotExecute: 126,
  /** `uspark run`: the agent command was not found. */
  notFound: 127,
} as const;

/** The conventional exit code of a process ended by `signal`: 128 + its number (SIGHUP 129, SIGINT 130, SIGTERM 143). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + os.constants.signals[signal];
}
