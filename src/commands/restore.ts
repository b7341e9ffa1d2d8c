import type { Command } from "../cli/commander.js";
import type { HistoryFlags } from "../cli/flags.js";
import { int } from "../cli/options.js";
import { addInspectOptions, HISTORY_HELP, runInspection } from "./inspect.js";

// `uspark restore` (lifecycle/restore.ts does it).

export function addRestoreCommand(program: Command): void {
  addInspectOptions(program.command("restore").description("commit the content these paths had at version N back, and write it here (a local edit kept in .uspark/backup/)"))
    .argument("<paths...>", "files or directories, relative to the current directory")
    .requiredOption("--at <version>", "the version to restore", int("--at"))
    .addHelpText("after", HISTORY_HELP)
    .action((paths: string[], flags: HistoryFlags & { at: number }) => runRestoreCommand(paths, flags));
}

export function runRestoreCommand(paths: string[], flags: HistoryFlags & { at: number }): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/restore.js")).runRestore({ ...o, paths, at: flags.at }));
}
