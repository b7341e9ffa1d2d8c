import type Picocolors from "picocolors";
import { requireCjs } from "./cjs.js";

const pc = requireCjs("picocolors") as typeof Picocolors;

/**
 * Everything the tool says goes through here, to stderr: never stdout, which belongs to the
 * agent. Text for people, NDJSON for machines; secrets are masked in both.
 */
export type LogFormat = "text" | "json";
export type Verbosity = "quiet" | "normal" | "verbose";
export type Level = "error" | "warn" | "info" | "debug";
export type Fields = Record<string, unknown>;

export interface ReporterOptions {
  format?: LogFormat;
  verbosity?: Verbosity;
  /** Where to write; stderr by default. */
  stream?: { write(text: string): unknown; isTTY?: boolean };
  /** Colour text output; by default on a TTY, as NO_COLOR and FORCE_COLOR allow. */
  color?: boolean;
  /** Strings never to print (the token), wherever they turn up. */
  secrets?: readonly string[];
}

const LEVEL_RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };
const VERBOSITY_RANK: Record<Verbosity, number> = { quiet: 0, normal: 2, verbose: 3 };

export class Reporter {
  readonly format: LogFormat;
  readonly verbosity: Verbosity;
  private readonly stream: NonNullable<ReporterOptions["stream"]>;
  private readonly colors: ReturnType<typeof pc.createColors>;
  private readonly secrets: string[];
  private readonly warnedKeys = new Set<string>();

  constructor(options: ReporterOptions = {}) {
    this.format = options.format ?? "text";
    this.verbosity = options.verbosity ?? "normal";
    this.stream = options.stream ?? process.stderr;
    this.colors = pc.createColors(options.color ?? colorWanted(this.stream.isTTY === true));
    this.secrets = (options.secrets ?? []).filter((secret) => secret.length > 0);
  }

  error(event: string, message: string, fields?: Fields): void {
    this.log("error", event, message, fields);
  }

  warn(event: string, message: string, fields?: Fields): void {
    this.log("warn", event, message, fields);
  }

  info(event: string, message: string, fields?: Fields): void {
    this.log("info", event, message, fields);
  }

  debug(event: string, message: string, fields?: Fields): void {
    this.log("debug", event, message, fields);
  }

  /**
   * One warning per key (a file's path) for the whole run, whoever notices the problem first:
   * the path policy, the sync engine or the file watcher. Later ones only show with --verbose.
   */
  warnOnce(key: string, event: string, message: string, fields?: Fields): void {
    if (this.warnedKeys.has(key)) return this.debug(event, message, fields);
    this.warnedKeys.add(key);
    this.warn(event, message, fields);
  }

  enabled(level: Level): boolean {
    // Errors are said even with --quiet.
    return LEVEL_RANK[level] <= Math.max(VERBOSITY_RANK[this.verbosity], LEVEL_RANK.error);
  }

  private log(level: Level, event: string, message: string, fields?: Fields): void {
    if (!this.enabled(level)) return;
    const text = this.format === "json" ? this.json(level, event, message, fields) : this.text(level, message);
    this.stream.write(this.mask(text) + "\n");
  }

  private json(level: Level, event: string, message: string, fields?: Fields): string {
    return JSON.stringify({ time: new Date().toISOString(), level, event, message, ...fields });
  }

  private text(level: Level, message: string): string {
    const c = this.colors;
    switch (level) {
      case "error":
        return c.red(`uspark: error: ${message}`);
      case "warn":
        return c.yellow(`uspark: warning: ${message}`);
      case "info":
        return `uspark: ${message}`;
      case "debug":
        return c.dim(`uspark: ${message}`);
    }
  }

  private mask(text: string): string {
    let masked = text;
    for (const secret of this.secrets) masked = masked.split(secret).join("***");
    return masked;
  }
}

/** NO_COLOR wins over a TTY; FORCE_COLOR (other than "0") wins over a pipe. */
export function colorWanted(isTTY: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false") return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR === "0" || env.FORCE_COLOR === "false") return false;
  return isTTY && env.TERM !== "dumb";
}

/** What was not synced, one line per distinct reason: a 401 with 200 files is one line, not 200. */
export function reportNotSynced(report: Reporter, entries: readonly { remote: string; reason: string }[]): void {
  const byReason = new Map<string, string[]>();
  for (const { remote, reason } of entries) {
    const paths = byReason.get(reason);
    if (paths) paths.push(remote);
    else byReason.set(reason, [remote]);
  }
  for (const [reason, paths] of byReason) {
    const shown = paths.length > 10 ? `${paths.slice(0, 10).join(", ")} and ${paths.length - 10} more` : paths.join(", ");
    report.error("not-synced", `not synced (${reason}): ${shown}`, { paths, reason });
  }
}
