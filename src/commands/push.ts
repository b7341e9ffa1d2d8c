import { MASS_DELETE_TEXT } from "../reconcile/mass-delete.js";
import { DEFAULTS } from "../watcher/watcher.js";
import type { Command } from "./kit/commander.js";
import { reporterFor, rootAndConnection } from "./kit/connection.js";
import { exit } from "./kit/exit.js";
import { addFlags, countFlag, positiveFlag, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { logFlags, projectCreateFlags, requestTimeoutFlag, timeoutFlagWithOlderName, treeFlags } from "./kit/flags.js";
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

/** push's own flags, then the project's, the tree's and the log's. */
const pushFlags = {
  pending: switchFlag("--pending", "retry what earlier runs journaled in <root>/.uspark/pending.json"),
  delete: switchFlag("--delete", "accepted for compatibility: deletes made here are always pushed (see --help)"),
  force: switchFlag(
    "--force",
    `yours wins: conflicts (of the given paths, or all) are committed over the remote's, and deletes of more than ${MASS_DELETE_TEXT} of the project are carried out`,
  ),
  dryRun: switchFlag("--dry-run", "list what would be pushed and deleted; send nothing"),
  ontoRewound: switchFlag(
    "--onto-rewound",
    "the server was restored from an older backup (every command refuses it): commit this tree's files onto it as it is now, and sync with its history from then on",
  ),
  timeout: timeoutFlagWithOlderName(),
  requestTimeout: requestTimeoutFlag,
  maxFileSize: countFlag("--max-file-size <bytes>", "skip larger files", DEFAULTS.maxFileSize),
  concurrency: positiveFlag("--concurrency <n>", "parallel blob uploads", DEFAULTS.concurrency),
  ...projectCreateFlags,
  ...treeFlags,
  ...logFlags,
};

export type PushFlags = FlagValues<typeof pushFlags>;

export function addPushCommand(program: Command): void {
  const push = program
    .command("push")
    .description("commit what changed here: the given paths, the journal of an earlier run (--pending), or the whole tree")
    .argument("[paths...]", "files or directories to push, relative to the current directory (default: everything)");
  addFlags(push, pushFlags)
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
    timeoutMs: flags.timeout,
    requestTimeoutMs: flags.requestTimeout,
    maxFileSize: flags.maxFileSize,
    concurrency: flags.concurrency,
    create: flags.create === true,
    source: { agent: "push" },
    report: reporterFor(flags, connection.token),
  });
  exit(code);
}
