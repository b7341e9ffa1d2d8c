import type { Command } from "./kit/commander.js";
import { addFlags, countFlag, type FlagValues } from "./kit/flag-kit.js";
import { HISTORY_HELP, inspectFlags, runInspection } from "./inspect.js";

// `uspark cat` (lifecycle/history.ts does it).

/** cat's flags: those of every inspecting command, then its own. */
const catFlags = {
  ...inspectFlags,
  at: countFlag("--at <version>", "as of this version"),
};

export type CatFlags = FlagValues<typeof catFlags>;

export function addCatCommand(program: Command): void {
  const command = program
    .command("cat")
    .description("a remote file's bytes on stdout (--at N: as of version N)")
    .argument("<path>", "the file, relative to the current directory");
  addFlags(command, catFlags)
    .addHelpText("after", HISTORY_HELP)
    .action((path: string, flags: CatFlags) => runCatCommand(path, flags));
}

export function runCatCommand(path: string, flags: CatFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runCat({ ...o, path, at: flags.at }));
}
