import type { Command } from "./kit/commander.js";
import { addFlags, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { inspectFlags, runInspection } from "./inspect.js";

// `uspark status` (lifecycle/status.ts does it).

const STATUS_HELP = `
Compares the tree, the last sync (.uspark/state.json) and the remote, changing nothing: what a push
would send, what a pull would take, open conflicts, deletes held by the mass-delete guard, and what
an earlier run journaled. Exit code: 0 everything in sync, 1 anything not (with or without --json),
2 usage. --json prints one object: { "format": 1, "projectId", "apiUrl", "root", "baseVersion",
"remoteVersion", "inSync", "paths": [{ "path", "status", "copy"? }] } (docs/commands.md#status---json).

Examples:
  $ uspark status                                    # in a pulled tree: no flags needed
  $ uspark status --short                            # two letters a path: here, remotely (UU: conflict)
  $ uspark status --json | jq '.paths[] | select(.status == "conflict")'
  $ uspark status --quiet || uspark push             # scriptable: exit 1 when not in sync`;

/** status's flags: those of every inspecting command, then its own. */
const statusFlags = {
  ...inspectFlags,
  json: switchFlag("--json", "one JSON object (a documented, versioned shape)"),
  short: switchFlag("--short", "one line a path: two letters (here, remotely), then the path"),
};

export type StatusFlags = FlagValues<typeof statusFlags>;

export function addStatusCommand(program: Command): void {
  const command = program.command("status").description("what is not in sync: changes here, changes remotely, conflicts (exit 1 if any)");
  addFlags(command, statusFlags)
    .addHelpText("after", STATUS_HELP)
    .action((flags: StatusFlags) => runStatusCommand(flags));
}

export function runStatusCommand(flags: StatusFlags): Promise<void> {
  return runInspection(flags, async (o) =>
    (await import("../lifecycle/status.js")).runStatus({ ...o, json: flags.json === true, short: flags.short === true }),
  );
}
