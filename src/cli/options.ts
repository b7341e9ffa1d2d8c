import { DEFAULT_API_URL, parseNonNegativeInt, parsePositiveInt } from "../config.js";
import { DEFAULTS } from "../watcher.js";
import { Option, type Command } from "./commander.js";

/** The flags several commands share, declared once. */

/**
 * `--timeout`: how long a server may stay silent before the command gives up (push, pull, status
 * and the others), or a session's last pushes may take at its end (watch, run). One name for one
 * idea; `--flush-timeout`, its name until 0.4 for push, pull and the watchers, is still taken.
 */
export function timeoutOption(description: string): Option {
  return new Option("--timeout <ms>", description).argParser(int("--timeout")).default(DEFAULTS.flushTimeoutMs);
}

/** The older name of --timeout (flags.ts timeoutOf reads both): hidden from help and completion. */
export function flushTimeoutAlias(): Option {
  return new Option("--flush-timeout <ms>", "the older name of --timeout").argParser(int("--flush-timeout")).hideHelp();
}

/** The connection flags; `--create` only where a command may write to a project it made. */
export function addConnectionOptions(command: Command, { create = true } = {}): Command {
  command.option("--project-id <id>", "the remote project (or USPARK_PROJECT_ID)");
  if (create) command.option("--create", "create the project on the server if it does not exist yet (else that is an error, exit 2)");
  return addServerOptions(command, { project: true });
}

/**
 * Which server, and how to be let in: `projects` names no project of its own. Its --project-id
 * and --create, offered until 0.4 and meaning nothing there, are still taken, out of sight.
 */
export function addServerOptions(command: Command, { project = false } = {}): Command {
  if (!project) command.addOption(new Option("--project-id <id>").hideHelp()).addOption(new Option("--create").hideHelp());
  return command
    .option("--api-url <url>", `the project API (or USPARK_API_URL; default ${DEFAULT_API_URL})`)
    .option("--token <token>", "bearer token (or USPARK_TOKEN, or ~/.uspark/config.json)")
    .option("--insecure", "allow plain http:// to a host other than this machine");
}

export function addTreeOptions(command: Command): Command {
  return command
    .option("--root <dir>", "the project root; nothing outside it is synced (default: the nearest directory upward holding .uspark/state.json, else the current one)")
    .option("--ignore <glob>", "never sync files matching this gitignore-style pattern (repeatable)", collect)
    .option("--prefix <dir>", "sync only files under <root>/<dir>, stored without that prefix");
}

export function addLogOptions(command: Command): Command {
  return command
    .option("-q, --quiet", "print errors only")
    .option("-v, --verbose", "print every detection and request")
    .addOption(new Option("--log-format <format>", "how stderr lines are written").choices(["text", "json"]).default("text"));
}


export function int(name: string) {
  return (raw: string) => parseNonNegativeInt(name, raw);
}

export function positive(name: string) {
  return (raw: string) => parsePositiveInt(name, raw);
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
