import { MASS_DELETE_TEXT } from "../mass-delete.js";
import { DEFAULTS } from "../watcher.js";
import type { Command } from "../cli/commander.js";
import { reporterFor, rootAndConnection } from "../cli/connection.js";
import { exit } from "../cli/exit.js";
import { timeoutOf, type PushFlags } from "../cli/flags.js";
import { addConnectionOptions, addLogOptions, addTreeOptions, flushTimeoutAlias, int, positive, timeoutOption } from "../cli/options.js";
import { CONFLICTS_HELP } from "./conflicts-help.js";

// `uspark push`: commits what changed here (lifecycle/push.ts does it).

const PUSH_HELP = `
Commits what changed here since the last sync, each change on condition that the remote still
holds what this machine last saw (so another writer's newer edit is never overwritten), and
deletes remotely what was deleted here (only files the last sync held; most of the project only
with --force, and then nothing at all is committed without it). Remote changes are left alone
(pull takes them).
${CONFLICTS_HELP}

Examples:
  $ uspark push --project-id my-app                  # everything that changed under the root
  $ uspark push src/ README.md                       # only these (relative to the current directory)
  $ uspark push --dry-run                            # what would be sent; nothing sent
  $ uspark push --force src/app.ts                   # a conflict: yours wins
  $ uspark push --pending                            # retry what an earlier run journaled
  $ cd src && uspark push                            # in a pulled tree: its root, project and server`;

export function addPushCommand(program: Command): void {
  addLogOptions(
    addTreeOptions(
      addConnectionOptions(
        program
          .command("push")
          .description("commit what changed here: the given paths, the journal of an earlier run (--pending), or the whole tree")
          .argument("[paths...]", "files or directories to push, relative to the current directory (default: everything)")
          .option("--pending", "retry what earlier runs journaled in <root>/.uspark/pending.json")
          .option("--delete", "accepted for compatibility: deletes made here are always pushed (see --help)")
          .option("--force", `yours wins: conflicts (of the given paths, or all) are committed over the remote's, and deletes of more than ${MASS_DELETE_TEXT} of the project are carried out`)
          .option("--dry-run", "list what would be pushed and deleted; send nothing")
          .option("--onto-rewound", "the server was restored from an older backup (every command refuses it): commit this tree's files onto it as it is now, and sync with its history from then on")
          .addOption(timeoutOption("give up when the server has not answered for this long"))
          .addOption(flushTimeoutAlias())
          .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
          .option("--max-file-size <bytes>", "skip larger files", int("--max-file-size"), DEFAULTS.maxFileSize)
          .option("--concurrency <n>", "parallel blob uploads", positive("--concurrency"), DEFAULTS.concurrency),
      ),
    ),
  )
    .addHelpText("after", PUSH_HELP)
    .action((paths: string[], flags: PushFlags) => runPushCommand(paths, flags));
}

export async function runPushCommand(paths: string[], flags: PushFlags): Promise<void> {
  const target = await rootAndConnection(flags, { prefixMustExist: true });
  if (!target) return;
  const { root, connection, prefix } = target;
  const { runPush } = await import("../lifecycle/push.js");
  const code = await runPush({
    ...connection,
    root,
    paths,
    pending: flags.pending === true,
    force: flags.force === true,
    dryRun: flags.dryRun === true,
    ontoRewound: flags.ontoRewound === true,
    ignore: flags.ignore ?? [],
    prefix,
    flushTimeoutMs: timeoutOf(flags),
    requestTimeoutMs: flags.requestTimeout,
    maxFileSize: flags.maxFileSize,
    concurrency: flags.concurrency,
    create: flags.create === true,
    source: { agent: "push" },
    report: reporterFor(flags, connection.token),
  });
  exit(code);
}
