import type { Command } from "./kit/commander.js";
import { addFlags, type FlagValues } from "./kit/flag-kit.js";
import { runWatchCommand, WATCH_EXAMPLES } from "./watch.js";
import { sessionFlags } from "./watch-session.js";

// `uspark watch-claude`: watch, for Claude Code's stream.

export function addWatchClaudeCommand(program: Command): void {
  addFlags(
    program
      .command("watch-claude")
      .description("sync the files edited in a Claude Code stream (claude -p --output-format stream-json --verbose)"),
    sessionFlags,
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: FlagValues<typeof sessionFlags>) => runWatchCommand({ ...flags, agent: "claude" }));
}
