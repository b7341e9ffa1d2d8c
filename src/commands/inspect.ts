import { reporterFor, rootAndConnection } from "./kit/connection.js";
import { exit } from "./kit/exit.js";
import type { FlagValues } from "./kit/flag-kit.js";
import { logFlags, projectFlags, requestTimeoutFlag, timeoutFlag, treeFlags } from "./kit/flags.js";
import { EXIT } from "../util/exit-codes.js";

// status, diff, log, ls, cat, restore (docs/commands.md#status-diff-and-history): what is in sync,
// what changed, what was. What they share: their flags, the workspace they open, their stdout.

export const HISTORY_HELP = `
The remote keeps every version (API 1.2 servers): each commit raises it by one.

Examples:
  $ uspark log -n 5                                  # the last five commits: version, time, agent, session, paths
  $ uspark log src/app.ts --json                     # the commits that touched src/app.ts
  $ uspark ls --at 12                                # the files at version 12
  $ uspark cat src/app.ts --at 12 > old-app.ts       # a file's bytes at version 12
  $ uspark restore src/app.ts --at 12                # commit that content back, and write it here`;

/** status, diff, log, ls, cat, restore: the project's connection and tree, how long to wait for the server, the log; then each one's own. */
export const inspectFlags = {
  ...projectFlags,
  ...treeFlags,
  timeout: timeoutFlag(),
  requestTimeout: requestTimeoutFlag,
  ...logFlags,
};

export type InspectFlags = FlagValues<typeof inspectFlags>;

/** The workspace options of status, diff, log, ls, cat and restore; undefined after a usage error was said. */
async function inspectOptions(flags: InspectFlags) {
  const target = await rootAndConnection(flags, { prefixMustExist: false });
  if (!target) return undefined;
  const { root, connection, prefix } = target;
  return {
    ...connection,
    root,
    ignore: flags.ignore,
    prefix,
    create: false,
    timeoutMs: flags.timeout,
    requestTimeoutMs: flags.requestTimeout,
    report: reporterFor(flags, connection.token),
  };
}

/** One of the commands whose answer goes to stdout; exit 74 when writing it failed (a closed pipe is no failure). */
export async function runInspection(
  flags: InspectFlags,
  run: (options: NonNullable<Awaited<ReturnType<typeof inspectOptions>>>) => Promise<number>,
): Promise<void> {
  const options = await inspectOptions(flags);
  if (!options) return;
  const code = await run(options);
  const { stdoutFailed } = await import("../terminal/output.js");
  exit(stdoutFailed() ? EXIT.outputError : code);
}
