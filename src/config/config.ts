import { appendFileSync, chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { nodeCrypto } from "../util/lazy-builtins.js";
import { isLoopbackHost } from "../util/loopback.js";
import { isInside } from "../paths/paths.js";
import { redactCredentials } from "../report/reporter.js";
import { errorCode, errorText } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/**
 * Where the connection settings come from, in order: flags, environment
 * (USPARK_API_URL, USPARK_TOKEN, USPARK_PROJECT_ID), the remote the root last synced with
 * (its .uspark/state.json: api url, project id, prefix; its server only if chosen on this
 * machine, `isChosenServer`), then ~/.uspark/config.json.
 */
export const DEFAULT_API_URL = "http://127.0.0.1:4400";

/** A mistake in how the tool was called or configured: exit code 2, one line and a hint. */
export class UsageError extends UsparkError {
  readonly code = "usage";
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

export interface ConnectionFlags {
  apiUrl?: string;
  token?: string;
  projectId?: string;
  insecure?: boolean;
}

export interface HomeConfig {
  apiUrl?: string;
  token?: string;
  projectId?: string;
  /** Tokens saved by `uspark login`, by API URL: each goes only to the server it was made by. */
  servers?: Record<string, { token: string }>;
  /** Not a key of config.json: the servers recorded beside it, in ~/.uspark/known-servers (`knownServersPath`). */
  knownServers?: ReadonlySet<string>;
}

const HOME_KEYS: readonly string[] = ["apiUrl", "token", "projectId", "servers"];
const HOME_EXPECTED = 'expected { "apiUrl": "...", "token": "...", "projectId": "...", "servers": { "<api url>": { "token": "..." } } }';

/** What a root's state file remembers of the remote it last synced with. */
export interface RememberedRemote {
  apiUrl: string;
  projectId: string;
  /** "" or none for the whole project. */
  prefix?: string;
}

export interface Connection {
  apiUrl: string;
  token?: string;
  projectId: string;
}

export function resolveConnection(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv,
  home: HomeConfig,
  remembered?: RememberedRemote,
  missing: MissingProjectHint = {},
): Connection {
  const projectId = flags.projectId ?? nonEmpty(env.USPARK_PROJECT_ID) ?? remembered?.projectId ?? home.projectId;
  return { ...resolveServer(flags, env, home, remembered), projectId: requireProjectId(projectId, missing) };
}

/**
 * The server and token alone (commands that name no project, such as `uspark projects`). A tree's
 * state file may have been written by anyone (a cloned repository, a tarball, another user's
 * parent directory): the server it names is used only when this user chose it on this machine.
 */
export function resolveServer(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv,
  home: HomeConfig,
  remembered?: RememberedRemote,
): { apiUrl: string; token?: string } {
  const given = givenApiUrl(flags, env);
  const apiUrl = given ?? remembered?.apiUrl ?? home.apiUrl ?? DEFAULT_API_URL;
  // The config's own token goes only to the config's own server, even among the chosen ones.
  const foreign =
    given === undefined &&
    remembered !== undefined &&
    normalizeApiUrl(remembered.apiUrl) !== normalizeApiUrl(home.apiUrl ?? DEFAULT_API_URL);
  const checked = checkApiUrl(apiUrl, flags.insecure === true);
  if (given === undefined && remembered !== undefined && !isChosenServer(checked, home)) {
    throw new UsageError(
      `this tree's .uspark/state.json names ${checked}, a server not chosen on this machine: nothing was sent`,
      `if you trust it, pass --api-url ${checked} (remembered from then on)`,
    );
  }
  const loggedIn = home.servers?.[normalizeApiUrl(checked)]?.token;
  const token = flags.token ?? nonEmpty(env.USPARK_TOKEN) ?? loggedIn ?? (foreign ? undefined : home.token);
  return { apiUrl: checked, token };
}

/** The server the user named for this command: --api-url, else USPARK_API_URL. */
export function givenApiUrl(flags: Pick<ConnectionFlags, "apiUrl">, env: NodeJS.ProcessEnv): string | undefined {
  return flags.apiUrl ?? nonEmpty(env.USPARK_API_URL);
}

/**
 * Did this user choose `apiUrl` on this machine (as ssh keeps known_hosts)? The config's apiUrl
 * (else the default, where a token goes with no setting at all), a server logged in to, or one
 * recorded in known-servers when a command named it.
 */
export function isChosenServer(apiUrl: string, home: HomeConfig): boolean {
  const url = normalizeApiUrl(apiUrl);
  return (
    url === normalizeApiUrl(home.apiUrl ?? DEFAULT_API_URL) || home.servers?.[url] !== undefined || home.knownServers?.has(url) === true
  );
}

/** What the error for a missing project id may offer. */
export interface MissingProjectHint {
  /** The command has a --dry-run that needs no project (the watch commands). */
  dryRunNeedsNone?: boolean;
}

export function requireProjectId(projectId: string | undefined, { dryRunNeedsNone = false }: MissingProjectHint = {}): string {
  const ways = "pass --project-id <id>, set USPARK_PROJECT_ID, or run it in a pulled tree";
  if (!projectId) throw new UsageError("no project id given", dryRunNeedsNone ? `${ways}; --dry-run needs none` : ways);
  return projectId;
}

/**
 * --prefix, else the remembered one, but only for the remembered project on the remembered
 * server: another project's prefix would name a directory of a different tree.
 */
export function resolvePrefix(
  flagPrefix: string | undefined,
  connection: Pick<Connection, "apiUrl" | "projectId">,
  remembered?: RememberedRemote,
): string | undefined {
  if (flagPrefix !== undefined || !remembered?.prefix) return flagPrefix;
  const same = remembered.projectId === connection.projectId && normalizeApiUrl(remembered.apiUrl) === normalizeApiUrl(connection.apiUrl);
  return same ? remembered.prefix : undefined;
}

/** Plain http only to this machine, unless the user says --insecure: the token travels in clear. */
export function checkApiUrl(raw: string, insecure: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The URL is shown to help find the typo, but never the credentials in it.
    throw new UsageError(`invalid API URL ${JSON.stringify(redactCredentials(raw))}`, "use a full URL such as https://uspark.example.com");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`unsupported API URL scheme ${url.protocol} in ${redactCredentials(raw)}`, "use http:// or https://");
  }
  if (url.username || url.password) {
    throw new UsageError("the API URL must not carry credentials", "pass the token with --token or USPARK_TOKEN");
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname) && !insecure) {
    throw new UsageError(
      `refusing plain http to ${url.host}: the token and your files would travel unencrypted`,
      "use https://, or pass --insecure if this network is trusted",
    );
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/**
 * `--prefix` must name a directory under the root: a typo would otherwise sync nothing (watch)
 * or take every remote file for a local delete (push --delete).
 */
export function checkPrefix(root: string, prefix: string | undefined): void {
  if (prefix === undefined) return;
  const dir = path.resolve(root, prefix);
  let isDirectory = false;
  try {
    isDirectory = isInside(root, dir) && statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory)
    throw new UsageError(`--prefix ${prefix} is not a directory under the root ${root}`, "check its spelling; it is relative to --root");
}

export function homeConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.HOME || os.homedir(), ".uspark", "config.json");
}

/** Where `uspark serve` and `uspark serve token` keep their store when given neither --data nor --db. */
export function defaultServeData(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.HOME || os.homedir(), ".uspark", "serve-data");
}

/**
 * A missing file is no configuration; a broken one is an error worth stopping for. It holds
 * tokens: one readable by others is said (`warn`) and narrowed to 0600; unknown keys (a typo of a
 * setting that then silently does nothing) are named.
 */
export function loadHomeConfig(file: string = homeConfigPath(), warn: (message: string) => void = () => {}): HomeConfig {
  const config = readHomeObject(file);
  if (config === undefined) return {};
  narrowMode(file, warn);
  for (const key of Object.keys(config)) {
    if (!HOME_KEYS.includes(key)) warn(`${file}: unknown key ${JSON.stringify(key)} ignored (known: ${HOME_KEYS.join(", ")})`);
  }
  const result: HomeConfig = {};
  for (const key of ["apiUrl", "token", "projectId"] as const) {
    const value = config[key];
    if (value === undefined) continue;
    if (typeof value !== "string") throw new UsageError(`${file}: "${key}" must be a string`);
    result[key] = value;
  }
  if (config.servers !== undefined) result.servers = serversOf(file, config.servers);
  return result;
}

/** Beside config.json: the servers commands named (--api-url, USPARK_API_URL), one URL a line. */
export function knownServersPath(configFile: string = homeConfigPath()): string {
  return path.join(path.dirname(configFile), "known-servers");
}

/**
 * The recorded servers, normalized; none when there is no file. It decides where a token may go:
 * one that others may write to is narrowed to 0600 first, as config.json is (`warn` says so).
 */
export function loadKnownServers(file: string, warn: (message: string) => void = () => {}): Set<string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return new Set();
    throw new UsageError(`cannot read ${file}: ${errorText(error)}`);
  }
  narrowMode(file, warn);
  return new Set(
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
      .map(normalizeApiUrl),
  );
}

/**
 * Adds one server in one appended line (mode 0600, in a 0700 directory): commands of the same
 * user running at once each add theirs, where a rewrite of the whole file could drop another's.
 */
export function recordKnownServer(file: string, apiUrl: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // A newline first too: a line an earlier write left unfinished (a full disk) is never glued to this one.
  appendFileSync(file, `\n${normalizeApiUrl(apiUrl)}\n`, { mode: 0o600 });
}

/** The file's JSON object, or undefined when there is no file. */
function readHomeObject(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw new UsageError(`cannot read ${file}: ${errorText(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`, HOME_EXPECTED);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${file} must hold a JSON object`, HOME_EXPECTED);
  }
  return parsed as Record<string, unknown>;
}

function serversOf(file: string, value: unknown): Record<string, { token: string }> {
  const entries = typeof value === "object" && value !== null && !Array.isArray(value) ? Object.entries(value) : undefined;
  const valid = entries?.every(([, server]) => typeof (server as { token?: unknown } | null)?.token === "string");
  if (!entries || !valid) throw new UsageError(`${file}: "servers" must map API URLs to { "token": "..." }`, HOME_EXPECTED);
  return Object.fromEntries(entries.map(([url, server]) => [normalizeApiUrl(url), { token: (server as { token: string }).token }]));
}

/** Group or others may read it: say so (naming the mode) and make it the owner's alone. */
function narrowMode(file: string, warn: (message: string) => void): void {
  if (process.platform === "win32") return; // no POSIX modes there
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const shown = mode.toString(8).padStart(4, "0");
  try {
    chmodSync(file, 0o600);
  } catch (error) {
    // Another user's file, a read-only mount: said, and not in the way of the command.
    return warn(`${file} has mode ${shown}, readable by others, and cannot be narrowed (${errorCode(error)}): chmod 600 it`);
  }
  warn(`${file} had mode ${shown}, readable by others: narrowed to 0600 (it holds tokens)`);
}

/**
 * `uspark login` and `logout`: changes the file's object (other keys are kept as they are) and
 * writes it whole through a new file of mode 0600 renamed over it: never readable by others, not
 * even for a moment, and never half written.
 */
export function updateHomeConfig(file: string, change: (config: Record<string, unknown>) => void): void {
  const config = readHomeObject(file) ?? {};
  change(config);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${nodeCrypto().randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temporary, file);
}

/** Command-line durations and sizes: whole numbers, no units (durations are milliseconds). */
export function parseNonNegativeInt(name: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${name} takes a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new UsageError(`${name} is too large: ${raw}`);
  return value;
}

export function parsePositiveInt(name: string, raw: string): number {
  const value = parseNonNegativeInt(name, raw);
  if (value === 0) throw new UsageError(`${name} must be at least 1`);
  return value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** Is an environment flag such as CHOKIDAR_USEPOLLING set to something true? */
export function envFlag(value: string | undefined): boolean {
  if (value === undefined) return false;
  const normalized = value.trim().toLowerCase();
  return normalized !== "" && normalized !== "0" && normalized !== "false" && normalized !== "no" && normalized !== "off";
}

/** `http://h:1/` and `http://h:1` are the same API. */
export function normalizeApiUrl(apiUrl: string): string {
  try {
    const url = new URL(apiUrl);
    return url.origin + url.pathname.replace(/\/+$/, "");
  } catch {
    return apiUrl;
  }
}
