import type { Command } from "./kit/commander.js";
import { addFlags, countFlag, type FlagValues } from "./kit/flag-kit.js";
import { HISTORY_HELP, inspectFlags, runInspection } from "./inspect.js";

// `uspark ls` (lifecycle/history.ts does it).

/** ls's flags: those of every inspecting command, then its own. */
const lsFlags = {
  ...inspectFlags,
  at: countFlag("--at <version>", "as of this version"),
};

export type LsFlags = FlagValues<typeof lsFlags>;

export function addLsCommand(program: Command): void {
  const command = program.command("ls").description("the remote's files (--at N: as of version N), one path a line");
  addFlags(command, lsFlags)
    .addHelpText("after", HISTORY_HELP)
    .action((flags: LsFlags) => runLsCommand(flags));
}

export function runLsCommand(flags: LsFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runLs({ ...o, at: flags.at }));
}
