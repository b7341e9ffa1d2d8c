import type { Command } from "../cli/commander.js";
import type { HistoryFlags } from "../cli/flags.js";
import { positive } from "../cli/options.js";
import { addInspectOptions, HISTORY_HELP, runInspection } from "./inspect.js";

// `uspark log` (lifecycle/history.ts does it).

export function addLogCommand(program: Command): void {
  addInspectOptions(program.command("log").description("the remote's commits, newest first: version, time, agent and session, paths"))
    .argument("[path]", "only commits that touched this file or directory")
    .option("-n <count>", "how many commits", positive("-n"), 20)
    .option("--json", "one JSON object { format: 1, version, commits }")
    .addHelpText("after", HISTORY_HELP)
    .action((path: string | undefined, flags: HistoryFlags) => runLogCommand(path, flags));
}

export function runLogCommand(path: string | undefined, flags: HistoryFlags): Promise<void> {
  return runInspection(flags, async (o) => (await import("../lifecycle/history.js")).runLog({ ...o, path, limit: flags.n ?? 20, json: flags.json === true }));
}
