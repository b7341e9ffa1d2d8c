import type { Command } from "../cli/commander.js";
import type { HistoryFlags } from "../cli/flags.js";
import { int } from "../cli/options.js";
import { addInspectOptions, HISTORY_HELP, runInspection } from "./inspect.js";

// `uspark ls` (lifecycle/history.ts does it).

export function addLsCommand(program: Command): void {
  addInspectOptions(program.command("ls").description("the remote's files (--at N: as of version N), one path a line"))
    .option("--at <version>", "as of this version", int("--at"))
    .addHelpText("after", HISTORY_HELP)
    .action((flags: HistoryFlags) => runLsCommand(flags));
}

export function runLsCommand(flags: HistoryFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runLs({ ...o, at: flags.at }));
}
