import { DEFAULT_API_URL } from "../../config/config.js";
import { DEFAULTS } from "../../watcher/watcher.js";
import { choiceFlag, countFlag, listFlag, switchFlag, textFlag, type FlagValues } from "./flag-kit.js";

/** The flags several commands share, declared once (flag-kit.ts); each command's own are in its module. */

/** How much stderr says, and how. */
export const logFlags = {
  quiet: switchFlag("-q, --quiet", "print errors only"),
  verbose: switchFlag("-v, --verbose", "print every detection and request"),
  logFormat: choiceFlag("--log-format <format>", "how stderr lines are written", ["text", "json"], "text"),
};

/** Which server, and how to be let in. */
export const serverFlags = {
  apiUrl: textFlag("--api-url <url>", `the project API (or USPARK_API_URL; default ${DEFAULT_API_URL})`),
  token: textFlag("--token <token>", "bearer token (or USPARK_TOKEN, or ~/.uspark/config.json)"),
  insecure: switchFlag("--insecure", "allow plain http:// to a host other than this machine"),
};

const projectId = textFlag("--project-id <id>", "the remote project (or USPARK_PROJECT_ID)");

/** The project and its server, for a command that only reads it or changes what exists (status, resolve). */
export const projectFlags = { projectId, ...serverFlags };

/** The project and its server, with --create: for a command that may write to a project it made. */
export const projectCreateFlags = {
  projectId,
  create: switchFlag("--create", "create the project on the server if it does not exist yet (else that is an error, exit 2)"),
  ...serverFlags,
};

/**
 * The server alone (`projects` names no project of its own). Its --project-id and --create,
 * offered until 0.4 and meaning nothing there, are still taken, out of sight.
 */
export const serverOnlyFlags = {
  projectId: textFlag("--project-id <id>").hidden(),
  create: switchFlag("--create").hidden(),
  ...serverFlags,
};

/** The tree synced: its root, what is left out, the part of the project it is. */
export const treeFlags = {
  root: textFlag(
    "--root <dir>",
    "the project root; nothing outside it is synced (default: the nearest directory upward holding .uspark/state.json, else the current one)",
  ),
  ignore: listFlag("--ignore <glob>", "never sync files matching this gitignore-style pattern (repeatable)"),
  prefix: textFlag("--prefix <dir>", "sync only files under <root>/<dir>, stored without that prefix"),
};

const GIVE_UP = "give up when the server has not answered for this long";

/**
 * `--timeout`: how long a server may stay silent before the command gives up (push, pull, status
 * and the others), or a session's last pushes may take at its end (watch, run). One name for one
 * idea, in code too (`timeout`).
 */
export function timeoutFlag(description = GIVE_UP) {
  return countFlag("--timeout <ms>", description, DEFAULTS.timeoutMs);
}

/** --timeout where `--flush-timeout`, its name until 0.4 for push, pull and the watchers, is still taken (hidden, stored as timeout). */
export function timeoutFlagWithOlderName(description = GIVE_UP) {
  return timeoutFlag(description).withOlderName(countFlag("--flush-timeout <ms>", "the older name of --timeout"));
}

export const requestTimeoutFlag = countFlag("--request-timeout <ms>", "time limit of one request", DEFAULTS.requestTimeoutMs);

export type LogFlags = FlagValues<typeof logFlags>;
export type ProjectFlags = FlagValues<typeof projectCreateFlags>;
export type TreeFlags = FlagValues<typeof treeFlags>;
