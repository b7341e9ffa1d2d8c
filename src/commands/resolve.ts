import { EXIT } from "../util/exit-codes.js";
import type { Command } from "./kit/commander.js";
import { reporterFor, rootAndConnection } from "./kit/connection.js";
import { exit } from "./kit/exit.js";
import { addFlags, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { logFlags, projectFlags, requestTimeoutFlag, timeoutFlag, treeFlags } from "./kit/flags.js";

// `uspark resolve <path>`: ends a conflict on every machine (lifecycle/resolve.ts does it).

const RESOLVE_HELP = `
--mine commits yours over the remote's version as it is now; --theirs writes the remote's version
here (yours kept in .uspark/backup/<time>/ first); each deletes the conflict copy remotely, so
every other machine loses it at its next pull or two-way watch (a copy someone edited since is
kept, and said). --both takes the remote's version at the path and keeps yours as a file of its
own, the copy. Exit 0 resolved, 1 not (the remote moved meanwhile: look again), 2 no conflict there.

Examples:
  $ uspark status                          # the open conflicts, with their copies
  $ uspark diff --remote src/app.ts        # yours, then the remote's
  $ uspark resolve src/app.ts --mine`;

/** resolve's own flags, then the project's (no --create: it changes what exists), the tree's and the log's. */
const resolveFlags = {
  mine: switchFlag("--mine", "yours wins: committed over the remote's version, the conflict copy deleted"),
  theirs: switchFlag("--theirs", "the remote's wins: written here (yours kept in .uspark/backup/ first), the conflict copy deleted"),
  both: switchFlag("--both", "the remote's at the path, yours kept as a file of its own (the copy)"),
  timeout: timeoutFlag(),
  requestTimeout: requestTimeoutFlag,
  ...projectFlags,
  ...treeFlags,
  ...logFlags,
};

export type ResolveFlags = FlagValues<typeof resolveFlags>;

export function addResolveCommand(program: Command): void {
  const resolve = program
    .command("resolve")
    .description("end a conflict, on every machine: yours, theirs, or both kept (the conflict copy goes)")
    .argument("<path>", "the file in conflict, relative to the current directory");
  addFlags(resolve, resolveFlags)
    .addHelpText("after", RESOLVE_HELP)
    .action((path: string, flags: ResolveFlags) => runResolveCommand(path, flags));
}

export async function runResolveCommand(path: string, flags: ResolveFlags): Promise<void> {
  exit(await resolve(flags, path));
}

async function resolve(flags: ResolveFlags, path: string): Promise<number> {
  const report = reporterFor(flags);
  const choices = (["mine", "theirs", "both"] as const).filter((c) => flags[c] === true);
  if (choices.length > 1) {
    report.error("usage", `choose one of --mine, --theirs, --both (got --${choices.join(", --")})`);
    return EXIT.usage;
  }
  const target = await rootAndConnection(flags, { prefixMustExist: false });
  if (!target) return EXIT.usage;
  const { root, connection, prefix } = target;
  const { runResolve } = await import("../lifecycle/resolve.js");
  return runResolve({
    ...connection,
    root,
    ignore: flags.ignore ?? [],
    prefix,
    path,
    choice: choices[0],
    timeoutMs: flags.timeout,
    requestTimeoutMs: flags.requestTimeout,
    report: reporterFor(flags, connection.token),
  });
}
