import type Picocolors from "picocolors";
import { requireCjs } from "../util/cjs.js";

import type { EventAt, EventName, Level } from "./events.js";

const pc = requireCjs("picocolors") as typeof Picocolors;

/**
 * Everything the tool says goes through here, to stderr: never stdout, which belongs to the
 * agent. Text for people, NDJSON for machines; secrets and credentials in URLs are masked in
 * both. Text lines show control characters escaped (a file name cannot forge a line or colour
 * the terminal); JSON keeps every string exact, as JSON escapes. A write error on stderr never
 * crashes the run: EPIPE (its reader went away) silences it, any other error silences it and
 * makes the exit code non-zero (see `stderrFailure`).
 */
export type LogFormat = "text" | "json";
export type Verbosity = "quiet" | "normal" | "verbose";
export type { Level } from "./events.js";
export type Fields = Record<string, unknown>;

/** One thing said, as a listener sees it (the run view shows the commits). */
export interface ReportRecord {
  level: Level;
  event: EventName;
  message: string;
  fields?: Fields;
}

export interface ReporterOptions {
  format?: LogFormat;
  verbosity?: Verbosity;
  /** Where to write; stderr (guarded, see `stderrOutput`) by default. */
  stream?: { write(text: string): unknown; isTTY?: boolean };
  /** Colour text output; by default on a TTY, as NO_COLOR and FORCE_COLOR allow. */
  color?: boolean;
  /** Strings never to print (the token), wherever they turn up. */
  secrets?: readonly string[];
  /**
   * Told what is said, before it is written (secrets masked in its message); returns true when it
   * showed the line itself, and a text log then leaves it out (a JSON log never does).
   */
  listener?: (record: ReportRecord) => boolean;
  /** Each text line starts with its time (ISO 8601, UTC), as a JSON line has it: a daemon's log, read later. */
  timestamps?: boolean;
}

const LEVEL_RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };
const VERBOSITY_RANK: Record<Verbosity, number> = { quiet: 0, normal: 2, verbose: 3 };

export class Reporter {
  readonly format: LogFormat;
  readonly verbosity: Verbosity;
  private readonly stream: NonNullable<ReporterOptions["stream"]>;
  private readonly colors: ReturnType<typeof pc.createColors>;
  /** One per secret, made once: every line said goes through them. */
  private readonly maskers: ((text: string) => string)[];
  private readonly listener: ReporterOptions["listener"];
  private readonly timestamps: boolean;
  /** The keys of what was said once (`warnOnce`, `infoOnce`), by level: a set each, so no key is rebuilt to be looked up. */
  private readonly saidKeys = { warn: new Set<string>(), info: new Set<string>() };
  /** A line rewritten in place at the bottom (a progress line): hidden while a line is written, then drawn again below it. */
  statusLine: { hide(): void; redraw(): void } | undefined;

  constructor(options: ReporterOptions = {}) {
    this.format = options.format ?? "text";
    this.verbosity = options.verbosity ?? "normal";
    this.stream = options.stream ?? stderrOutput();
    this.colors = pc.createColors(options.color ?? colorWanted(this.stream.isTTY === true));
    this.maskers = (options.secrets ?? []).map(secretMasker);
    this.listener = options.listener;
    this.timestamps = options.timestamps === true;
  }

  error(event: EventAt<"error">, message: string, fields?: Fields): void {
    this.log("error", event, message, fields);
  }

  warn(event: EventAt<"warn">, message: string, fields?: Fields): void {
    this.log("warn", event, message, fields);
  }

  info(event: EventAt<"info">, message: string, fields?: Fields): void {
    this.log("info", event, message, fields);
  }

  debug(event: EventAt<"debug">, message: string, fields?: Fields): void {
    this.log("debug", event, message, fields);
  }

  /**
   * One warning per key (a file's path) for the whole run, whoever notices the problem first:
   * the path policy, the sync engine or the file watcher. Later ones only show with --verbose.
   */
  warnOnce(key: string, event: EventAt<"warn">, message: string, fields?: Fields): void {
    this.once("warn", key, event, message, fields);
  }

  /** One line per key for the whole run (a file edited a thousand times); repeats only show with --verbose. */
  infoOnce(key: string, event: EventAt<"info">, message: string, fields?: Fields): void {
    this.once("info", key, event, message, fields);
  }

  private once(level: "warn" | "info", key: string, event: EventAt<"warn" | "info">, message: string, fields?: Fields): void {
    const said = this.saidKeys[level];
    // Said again: at debug, whatever levels the event lists (docs/log-events.md, "said once").
    if (said.has(key)) return this.log("debug", event, message, fields);
    said.add(key);
    this.log(level, event, message, fields);
  }

  /** An error we did not foresee: its stack, line by line, escaped like any other line. */
  internalError(error: unknown): void {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    for (const line of text.split("\n")) this.error("internal", line);
  }

  enabled(level: Level): boolean {
    // Errors are said even with --quiet.
    return LEVEL_RANK[level] <= Math.max(VERBOSITY_RANK[this.verbosity], LEVEL_RANK.error);
  }

  private log(level: Level, event: EventName, message: string, fields?: Fields): void {
    if (!this.enabled(level)) return;
    const shown = this.listener?.({ level, event, message: redactUrlCredentials(this.mask(message)), fields }) === true;
    if (shown && this.format === "text") return;
    const text = this.format === "json" ? this.json(level, event, message, fields) : this.stamped(this.text(level, escapeControl(message)));
    this.statusLine?.hide();
    this.stream.write(redactUrlCredentials(this.mask(text)) + "\n");
    this.statusLine?.redraw();
  }

  private json(level: Level, event: EventName, message: string, fields?: Fields): string {
    return JSON.stringify({ time: new Date().toISOString(), level, event, message, ...fields });
  }

  private stamped(line: string): string {
    return this.timestamps ? `${new Date().toISOString()} ${line}` : line;
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
    return this.maskers.reduce((masked, mask) => mask(masked), text);
  }
}

// C0 and C1 controls, DEL, and the bidi marks and overrides that reorder what a terminal shows.
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** Text safe for one terminal line: every control or bidi character shown as an escape (`\x1b`, `\n`, `\u{202e}`). */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE_CHARS, (char) => {
    const code = char.codePointAt(0)!;
    return NAMED_ESCAPES[char] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`);
  });
}

// `scheme://user:password@` or `scheme:/token@` (a misspelt URL is still a URL to hide).
const URL_USERINFO = /(:\/\/?)[^\s/?#@"'<>]+@/g;
// `user:password@host` with no scheme at all.
const BARE_USERINFO = /(^|[\s"'(<=,;])[^\s/?#@"'<>:]+:[^\s/?#@"'<>]*@(?=[^\s@])/g;
// `?token=…`, `&api_key=…`, `;password=…`: any query parameter named like a credential.
const SECRET_PARAM = /([?&;][\w.-]*(?:token|key|secret|password|passwd|pwd|auth|sig|signature|credential)[\w.-]*=)[^&;#\s"'<>]*/gi;

/** A secret this long is masked wherever it stands; a shorter one only where it stands apart. */
const MASKED_ANYWHERE = 8;
// What sets a short secret apart: the ends of the text, spaces, quotes and the punctuation around
// values (`token=dev`, `"dev"`, `(dev)`), never the letters, dots and slashes of a path.
const APART = `\\s"'=:,;()<>\\[\\]{}`;

/**
 * What replaces `secret` by `***` in a text. A short token (the reference server without an admin
 * token takes any, so `dev` is a likely one) masked inside words would garble every path and
 * message holding its letters (`src/devices/dev.ts` as `src/***ices/***.ts`); standing apart it is
 * still never printed.
 */
export function secretMasker(secret: string): (text: string) => string {
  if (secret.length === 0) return (text) => text;
  if (secret.length >= MASKED_ANYWHERE) return (text) => text.split(secret).join("***");
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const apart = new RegExp(`(?<=^|[${APART}])${escaped}(?=$|[${APART}])`, "g");
  return (text) => text.replace(apart, "***");
}

/** Credentials masked, URL or not: userinfo and credential-like query parameters become `***`. For text known to hold a URL. */
export function redactCredentials(text: string): string {
  return text.replace(URL_USERINFO, "$1***@").replace(BARE_USERINFO, "$1***@").replace(SECRET_PARAM, "$1***");
}

// A URL with a scheme (`https://…`, a misspelt `htps:/…`): only there does every line get looked at.
const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/?[^\s"'<>]*/gi;

/**
 * Credentials in the URLs of any line: userinfo and credential-like query parameters of what has
 * a scheme. A file name (`icon:hover@2x.png`, `a?token=1.txt`) is no URL and stays exact.
 */
export function redactUrlCredentials(text: string): string {
  return text.replace(URL_LIKE, (url) => url.replace(URL_USERINFO, "$1***@").replace(SECRET_PARAM, "$1***"));
}

export type OutputState = "open" | "closed" | "failed";

/** A stream we write to that may break under us; how it broke decides what we do next. */
export interface GuardedOutput {
  write(text: string): void;
  readonly isTTY: boolean;
  /** A terminal's width now (it follows a resize); undefined otherwise, 0 when unknown. */
  readonly columns: number | undefined;
  /** "closed": its reader went away (EPIPE); "failed": any other write error. */
  readonly state: OutputState;
  readonly error?: NodeJS.ErrnoException;
}

/** EPIPE: the reader went away (`| head`, a closed terminal pane). Not our failure. */
export function isReaderGone(error: NodeJS.ErrnoException): boolean {
  return error.code === "EPIPE";
}

/** Writes until the stream breaks, then stops quietly and remembers why. Never throws. */
export function guardOutput(stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }): GuardedOutput {
  let state: OutputState = "open";
  let failure: NodeJS.ErrnoException | undefined;
  const fail = (error: NodeJS.ErrnoException) => {
    if (state !== "open") return;
    failure = error;
    state = isReaderGone(error) ? "closed" : "failed";
  };
  stream.on("error", fail);
  return {
    write(text) {
      if (state !== "open") return;
      try {
        stream.write(text);
      } catch (error) {
        fail(error as NodeJS.ErrnoException); // a file stream's synchronous write throws
      }
    },
    get isTTY() {
      return stream.isTTY === true;
    },
    get columns() {
      return stream.columns;
    },
    get state() {
      return state;
    },
    get error() {
      return failure;
    },
  };
}

let stderr: GuardedOutput | undefined;

/** The process's stderr, guarded: shared by every Reporter, so one failure silences them all. */
export function stderrOutput(): GuardedOutput {
  stderr ??= guardOutput(process.stderr);
  return stderr;
}

/** A write error on stderr other than EPIPE, if one happened: the run must not exit 0. */
export function stderrFailure(): NodeJS.ErrnoException | undefined {
  return stderr?.state === "failed" ? stderr.error : undefined;
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

/** "1 file", "2 files", "3 conflict copies". */
export function plural(count: number, noun: string): string {
  if (count === 1) return `1 ${noun}`;
  return `${count} ${noun.endsWith("y") ? noun.slice(0, -1) + "ies" : noun + "s"}`;
}

/** What a session or a push committed: "2 files pushed", "0 files pushed and 1 conflict copy". */
export function pushedFiles(pushed: number, copies: number): string {
  return `${plural(pushed, "file")} pushed${copies > 0 ? ` and ${plural(copies, "conflict copy")}` : ""}`;
}
