import type { LogFormat } from "../report/reporter.js";

/** The parsed flags of each command, as commander hands them over. */

export interface LogFlags {
  quiet?: boolean;
  verbose?: boolean;
  logFormat: LogFormat;
}

export interface ConnectionOptionFlags {
  projectId?: string;
  /** --create: make the project if the server does not have it. */
  create?: boolean;
  apiUrl?: string;
  token?: string;
  insecure?: boolean;
}

export interface TreeFlags {
  /** Undefined: found upward from the current directory (root.ts). */
  root?: string;
  ignore?: string[];
  prefix?: string;
}

export interface WatchFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  agent: string;
  dryRun?: boolean;
  debounce: number;
  maxWait: number;
  timeout: number;
  /** The older name of --timeout (timeoutOf). */
  flushTimeout?: number;
  requestTimeout: number;
  maxFileSize: number;
  concurrency: number;
  fsWatch: boolean;
  poll?: number | true;
  maxLineLength?: number;
  rescan: number;
  transcript?: boolean;
  /** --two-way: also write the remote's changes here. */
  twoWay?: boolean;
  /** false with --no-stdin: no stream, the file watcher alone. */
  stdin?: boolean;
}

export interface RunFlags extends Omit<WatchFlags, "agent" | "stdin"> {
  agent?: string;
  pull?: boolean;
  /** After the agent exited, how long its stdout may stay open before the run stops reading it. */
  exitGrace: number;
  /** The agent's bytes on a terminal too, not the run view. */
  raw?: boolean;
}

export interface PushFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  pending?: boolean;
  delete?: boolean;
  force?: boolean;
  dryRun?: boolean;
  ontoRewound?: boolean;
  timeout: number;
  /** The older name of --timeout (timeoutOf). */
  flushTimeout?: number;
  requestTimeout: number;
  maxFileSize: number;
  concurrency: number;
}

export interface PullFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  force?: boolean;
  delete?: boolean;
  dryRun?: boolean;
  timeout: number;
  /** The older name of --timeout (timeoutOf). */
  flushTimeout?: number;
  requestTimeout: number;
  concurrency: number;
}

export interface ResolveFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  mine?: boolean;
  theirs?: boolean;
  both?: boolean;
  timeout: number;
  requestTimeout: number;
}

export interface ProjectsFlags extends LogFlags, ConnectionOptionFlags {
  json?: boolean;
}

/** `uspark login`, `uspark logout`: which server. */
export interface LoginFlags {
  apiUrl?: string;
  insecure?: boolean;
  /** login only: what to ask for; the person approving decides. */
  project?: string[];
  scope?: "read" | "write";
}

/** Where `uspark serve` and `uspark serve token` keep projects and tokens. */
export interface StoreFlags {
  data?: string;
  db?: string;
}

export interface TokenCreateFlags extends StoreFlags {
  project: string[];
  scope: "read" | "write";
  expires?: number;
}

export interface ServeFlags extends StoreFlags {
  port: number;
  host: string;
  publicUrl?: string;
  allowedHost?: string[];
  token?: string;
  quiet?: boolean;
  verbose?: boolean;
  maxBlobBytes?: number;
  latency?: number;
}

/** status, diff, log, ls, cat, restore: they read the project (restore also commits). */
export interface InspectFlags extends LogFlags, ConnectionOptionFlags, TreeFlags {
  timeout: number;
  requestTimeout: number;
}

export interface StatusFlags extends InspectFlags {
  json?: boolean;
  short?: boolean;
}

export interface DiffFlags extends InspectFlags {
  remote?: boolean;
}

export interface HistoryFlags extends InspectFlags {
  /** -n: how many commits (log). */
  n?: number;
  json?: boolean;
  /** --at N: as of version N (ls, cat, restore). */
  at?: number;
}

/** --timeout, or its older name --flush-timeout where that was given (it has no default of its own). */
export function timeoutOf(flags: { timeout: number; flushTimeout?: number }): number {
  return flags.flushTimeout ?? flags.timeout;
}
