import { EXIT } from "../util/exit-codes.js";
import { MASS_DELETE_TEXT } from "../reconcile/mass-delete.js";
import { DEFAULTS } from "../watcher/watcher.js";
import type { Command } from "./kit/commander.js";
import { reporterFor, rootAndConnection } from "./kit/connection.js";
import { exit } from "./kit/exit.js";
import { addFlags, positiveFlag, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { logFlags, projectCreateFlags, requestTimeoutFlag, timeoutFlagWithOlderName, treeFlags } from "./kit/flags.js";
import { CONFLICTS_HELP } from "./conflicts-help.js";

// `uspark pull`: writes the remote's changes here (lifecycle/pull.ts does it).

const PULL_HELP = `
Writes the remote's changes over files that did not change here since the last sync, and deletes
here what the remote deleted (only files the last sync held). Your own changes are left alone
(push sends them). Paths that would land outside the root, in .git/ or .uspark/, or through a
symlink are refused (exit 1). Deletes of most of what was last synced (more than ${MASS_DELETE_TEXT})
are refused (exit 1) and stay refused until --force: a remote that suddenly looks empty is more
often a wrong project or prefix.
${CONFLICTS_HELP}

Examples:
  $ uspark pull --project-id my-app                  # the remote project into the current directory
  $ uspark pull --project-id my-app --dry-run        # what would change; nothing written
  $ uspark pull --force src/app.ts                   # a conflict: take theirs (yours kept in .uspark/backup/)
  $ cd src && uspark pull                            # in a pulled tree: the whole project, at its root
  $ uspark pull --project-id my-app --prefix vendor/app --ignore "*.log"
  $ uspark pull --timeout 10000                      # give up after 10 s without an answer (as every command)`;

/** pull's own flags, then the project's, the tree's and the log's. */
const pullFlags = {
  force: switchFlag(
    "--force",
    `theirs wins: conflicts (of the given paths, or all) are overwritten after a backup in .uspark/backup/, and deletes of more than ${MASS_DELETE_TEXT} are carried out`,
  ),
  delete: switchFlag("--delete", "accepted for compatibility: deletes made remotely are always pulled (see --help)"),
  dryRun: switchFlag("--dry-run", "print what would be pulled and deleted; change nothing"),
  timeout: timeoutFlagWithOlderName(),
  requestTimeout: requestTimeoutFlag,
  concurrency: positiveFlag("--concurrency <n>", "requests in flight", DEFAULTS.concurrency),
  ...projectCreateFlags,
  ...treeFlags,
  ...logFlags,
};

export type PullFlags = FlagValues<typeof pullFlags>;

export function addPullCommand(program: Command): void {
  const pull = program
    .command("pull")
    .description("write the remote's changes under the root: only what differs, never over local changes")
    .argument("[paths...]", "files or directories to pull, relative to the current directory (default: everything)");
  addFlags(pull, pullFlags)
    .addHelpText("after", PULL_HELP)
    .action((paths: string[], flags: PullFlags) => runPullCommand(paths, flags));
}

export async function runPullCommand(paths: string[], flags: PullFlags): Promise<void> {
  exit(await pull(flags, paths));
}

export async function pull(flags: PullFlags, paths: string[] = []): Promise<number> {
  const target = await rootAndConnection(flags, { prefixMustExist: false });
  if (!target) return EXIT.usage;
  const { root, connection, prefix } = target;
  const { runPull } = await import("../lifecycle/pull.js");
  return runPull({
    ...connection,
    root,
    ignore: flags.ignore ?? [],
    prefix,
    paths,
    force: flags.force === true,
    dryRun: flags.dryRun === true,
    create: flags.create === true,
    timeoutMs: flags.timeout,
    requestTimeoutMs: flags.requestTimeout,
    concurrency: flags.concurrency,
    report: reporterFor(flags, connection.token),
  });
}
