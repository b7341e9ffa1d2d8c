import type { Command } from "../cli/commander.js";
import type { WatchFlags } from "../cli/flags.js";
import { addWatchOptions, runWatchCommand, WATCH_EXAMPLES } from "./watch.js";

// `uspark watch-claude`: watch, for Claude Code's stream.

export function addWatchClaudeCommand(program: Command): void {
  addWatchOptions(
    program
      .command("watch-claude")
      .description("sync the files edited in a Claude Code stream (claude -p --output-format stream-json --verbose)"),
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand({ ...flags, agent: "claude" }));
}
