import type { Command } from "../cli/commander.js";
import type { HistoryFlags } from "../cli/flags.js";
import { int } from "../cli/options.js";
import { addInspectOptions, HISTORY_HELP, runInspection } from "./inspect.js";

// `uspark cat` (lifecycle/history.ts does it).

export function addCatCommand(program: Command): void {
  addInspectOptions(program.command("cat").description("a remote file's bytes on stdout (--at N: as of version N)"))
    .argument("<path>", "the file, relative to the current directory")
    .option("--at <version>", "as of this version", int("--at"))
    .addHelpText("after", HISTORY_HELP)
    .action((path: string, flags: HistoryFlags) => runCatCommand(path, flags));
}

export function runCatCommand(path: string, flags: HistoryFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runCat({ ...o, path, at: flags.at }));
}
