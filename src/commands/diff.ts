import type { Command } from "./kit/commander.js";
import { addFlags, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { inspectFlags, runInspection } from "./inspect.js";

// `uspark diff` (lifecycle/diff.ts does it).

const DIFF_HELP = `
Unified diffs of the text files not in sync (a binary file: one line). Without --remote: what you
changed here since the last sync (what a push would send); with --remote: what a pull would change
here (your file, then the remote's). Nothing is written or sent.

Examples:
  $ uspark diff                                      # all your unsynced changes
  $ uspark diff src/app.ts                           # one file (relative to the current directory)
  $ uspark diff --remote                             # what uspark pull would change`;

/** diff's flags: those of every inspecting command, then its own. */
const diffFlags = {
  ...inspectFlags,
  remote: switchFlag("--remote", "what a pull would change here: your file, then the remote's"),
};

export type DiffFlags = FlagValues<typeof diffFlags>;

export function addDiffCommand(program: Command): void {
  const command = program
    .command("diff")
    .description("unified diffs of what changed here since the last sync (--remote: what a pull would change)")
    .argument("[paths...]", "files or directories, relative to the current directory (default: everything)");
  addFlags(command, diffFlags)
    .addHelpText("after", DIFF_HELP)
    .action((paths: string[], flags: DiffFlags) => runDiffCommand(paths, flags));
}

export function runDiffCommand(paths: string[], flags: DiffFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/diff.js")).runDiff({ ...o, paths, remote: flags.remote === true }));
}
