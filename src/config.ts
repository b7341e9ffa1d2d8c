import { readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isLoopbackHost } from "./loopback.js";
import { isInside } from "./paths.js";
import { redactCredentials } from "./report.js";

/**
 * Where the connection settings come from, in order: flags, environment
 * (USPARK_API_URL, USPARK_TOKEN, USPARK_PROJECT_ID), the remote the root last synced with
 * (its .uspark/state.json: api url, project id, prefix), then ~/.uspark/config.json.
 */
export const DEFAULT_API_URL = "http://127.0.0.1:4400";

/** A mistake in how the tool was called or configured: exit code 2, one line and a hint. */
export class UsageError extends Error {
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
}

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
): Connection {
  const projectId = flags.projectId ?? nonEmpty(env.USPARK_PROJECT_ID) ?? remembered?.projectId ?? home.projectId;
  return { ...resolveServer(flags, env, home, remembered), projectId: requireProjectId(projectId) };
}

/** The server and token alone (commands that name no project, such as `uspark projects`). */
export function resolveServer(flags: ConnectionFlags, env: NodeJS.ProcessEnv, home: HomeConfig, remembered?: RememberedRemote): { apiUrl: string; token?: string } {
  const given = flags.apiUrl ?? nonEmpty(env.USPARK_API_URL);
  const apiUrl = given ?? remembered?.apiUrl ?? home.apiUrl ?? DEFAULT_API_URL;
  // A tree copied from elsewhere may remember any server: the stored token goes only to the server it is stored for.
  const foreign = given === undefined && remembered !== undefined && normalizeApiUrl(remembered.apiUrl) !== normalizeApiUrl(home.apiUrl ?? DEFAULT_API_URL);
  const token = flags.token ?? nonEmpty(env.USPARK_TOKEN) ?? (foreign ? undefined : home.token);
  return { apiUrl: checkApiUrl(apiUrl, flags.insecure === true), token };
}

export function requireProjectId(projectId: string | undefined): string {
  if (!projectId) throw new UsageError("no project id given", "pass --project-id <id>, set USPARK_PROJECT_ID or run it in a pulled tree (or use --dry-run)");
  return projectId;
}

/**
 * --prefix, else the remembered one, but only for the remembered project on the remembered
 * server: another project's prefix would name a directory of a different tree.
 */
export function resolvePrefix(flagPrefix: string | undefined, connection: Pick<Connection, "apiUrl" | "projectId">, remembered?: RememberedRemote): string | undefined {
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
  if (!isDirectory) throw new UsageError(`--prefix ${prefix} is not a directory under the root ${root}`, "check its spelling; it is relative to --root");
}

export function homeConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.HOME || os.homedir(), ".uspark", "config.json");
}

/** A missing file is no configuration; a broken one is an error worth stopping for. */
export function loadHomeConfig(file: string = homeConfigPath()): HomeConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`, 'expected { "token": "...", "apiUrl": "..." }');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${file} must hold a JSON object`, 'expected { "token": "...", "apiUrl": "..." }');
  }
  const config = parsed as Record<string, unknown>;
  const result: HomeConfig = {};
  for (const key of ["apiUrl", "token", "projectId"] as const) {
    const value = config[key];
    if (value === undefined) continue;
    if (typeof value !== "string") throw new UsageError(`${file}: "${key}" must be a string`);
    result[key] = value;
  }
  return result;
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
