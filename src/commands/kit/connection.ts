import { statSync } from "node:fs";
import path from "node:path";
import {
  checkPrefix,
  givenApiUrl,
  homeConfigPath,
  isChosenServer,
  knownServersPath,
  loadHomeConfig,
  loadKnownServers,
  recordKnownServer,
  resolveConnection,
  resolvePrefix,
  UsageError,
  type Connection,
  type ConnectionFlags,
  type HomeConfig,
  type MissingProjectHint,
} from "../../config/config.js";
import { Reporter, type ReporterOptions, type Verbosity } from "../../report/reporter.js";
import { rememberedProject } from "../../reconcile/state-store.js";
import { findRoot } from "../../reconcile/root.js";
import { errorText } from "../../errors/text.js";
import { usageFailure } from "./exit.js";
import type { LogFlags, ProjectFlags, TreeFlags } from "./flags.js";

/** What the commands that reach a project share: its root, its server and project, its reporter. */

/** The checked root, connection settings and prefix; undefined after a usage error was reported. */
export async function rootAndConnection(
  flags: LogFlags & ProjectFlags & TreeFlags,
  options: { prefixMustExist: boolean },
): Promise<{ root: string; connection: Connection; prefix: string | undefined } | undefined> {
  try {
    const root = rootOf(flags);
    const { connection, prefix } = await connect(flags, root);
    // push reads under the prefix (a typo there would delete the whole remote); pull creates it.
    if (options.prefixMustExist) checkPrefix(root, prefix);
    return { root, connection, prefix };
  } catch (error) {
    usageFailure(reporterFor(flags), error);
    return undefined;
  }
}

/** Flags, then the environment, then what the root remembers of its last sync, then ~/.uspark/config.json. */
export async function connect(
  flags: LogFlags & ProjectFlags & Pick<TreeFlags, "prefix">,
  root: string,
  missing: MissingProjectHint = {},
): Promise<{ connection: Connection; prefix: string | undefined }> {
  const remembered = await rememberedProject(root);
  const report = reporterFor(flags);
  const home = homeConfig(report);
  const connection = resolveConnection(flags, process.env, home, remembered, missing);
  rememberChoice(flags, connection.apiUrl, home, report);
  return { connection, prefix: resolvePrefix(flags.prefix, connection, remembered) };
}

/** --root, else the nearest ancestor the tool synced before (as git finds its work tree), else here. */
export function rootOf(flags: Pick<TreeFlags, "root">): string {
  return checkRoot(flags.root ?? findRoot(process.cwd(), process.env.HOME));
}

function checkRoot(root: string): string {
  const resolved = path.resolve(root);
  let isDirectory = false;
  try {
    isDirectory = statSync(resolved).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) throw new UsageError(`--root ${root} is not a directory`);
  return resolved;
}

/** ~/.uspark/config.json (its mode and unknown keys said once each through `report`) and the servers recorded beside it. */
export function homeConfig(report: Reporter): HomeConfig {
  const file = homeConfigPath();
  const warn = (message: string) => report.warnOnce(message, "config", message);
  return { ...loadHomeConfig(file, warn), knownServers: loadKnownServers(knownServersPath(file), warn) };
}

/**
 * A server named by --api-url or USPARK_API_URL is this user's choice: recorded (known-servers),
 * so that the tree pulled from it needs no flag from then on. `apiUrl` is the checked one.
 */
export function rememberChoice(flags: Pick<ConnectionFlags, "apiUrl">, apiUrl: string, home: HomeConfig, report: Reporter): void {
  if (givenApiUrl(flags, process.env) === undefined || isChosenServer(apiUrl, home)) return;
  const file = knownServersPath();
  try {
    recordKnownServer(file, apiUrl);
  } catch (error) {
    report.warn("config", `cannot record ${apiUrl} in ${file} (${errorText(error)}): in a tree pulled from it, pass --api-url again`);
  }
}

/** `timestamps`: a daemon's lines (`watch --no-stdin`), read later in a supervisor's log, carry their time. */
export function reporterFor(flags: LogFlags, token?: string, listener?: ReporterOptions["listener"], timestamps = false): Reporter {
  const verbosity: Verbosity = flags.quiet ? "quiet" : flags.verbose ? "verbose" : "normal";
  return new Reporter({ format: flags.logFormat, verbosity, secrets: token ? [token] : [], listener, timestamps });
}
