import type { Command } from "./kit/commander.js";
import { addFlags, positiveFlag, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { HISTORY_HELP, inspectFlags, runInspection } from "./inspect.js";

// `uspark log` (lifecycle/history.ts does it).

/** log's flags: those of every inspecting command, then its own. */
const logCommandFlags = {
  ...inspectFlags,
  n: positiveFlag("-n <count>", "how many commits", 20),
  json: switchFlag("--json", "one JSON object { format: 1, version, commits }"),
};

export type LogCommandFlags = FlagValues<typeof logCommandFlags>;

export function addLogCommand(program: Command): void {
  const command = program
    .command("log")
    .description("the remote's commits, newest first: version, time, agent and session, paths")
    .argument("[path]", "only commits that touched this file or directory");
  addFlags(command, logCommandFlags)
    .addHelpText("after", HISTORY_HELP)
    .action((path: string | undefined, flags: LogCommandFlags) => runLogCommand(path, flags));
}

export function runLogCommand(path: string | undefined, flags: LogCommandFlags): Promise<void> {
  return runInspection(flags, async (o) =>
    (await import("../lifecycle/history.js")).runLog({ ...o, path, limit: flags.n, json: flags.json === true }),
  );
}
