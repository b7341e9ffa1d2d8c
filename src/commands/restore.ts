import type { Command } from "./kit/commander.js";
import { addFlags, countFlag, type FlagValues } from "./kit/flag-kit.js";
import { HISTORY_HELP, inspectFlags, runInspection } from "./inspect.js";

// `uspark restore` (lifecycle/restore.ts does it).

/** restore's flags: those of every inspecting command, then its own. */
const restoreFlags = {
  ...inspectFlags,
  at: countFlag("--at <version>", "the version to restore").required(),
};

export type RestoreFlags = FlagValues<typeof restoreFlags>;

export function addRestoreCommand(program: Command): void {
  const command = program
    .command("restore")
    .description("commit the content these paths had at version N back, and write it here (a local edit kept in .uspark/backup/)")
    .argument("<paths...>", "files or directories, relative to the current directory");
  addFlags(command, restoreFlags)
    .addHelpText("after", HISTORY_HELP)
    .action((paths: string[], flags: RestoreFlags) => runRestoreCommand(paths, flags));
}

export function runRestoreCommand(paths: string[], flags: RestoreFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/restore.js")).runRestore({ ...o, paths, at: flags.at }));
}
