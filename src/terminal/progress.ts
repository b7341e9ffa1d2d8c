import type { Direction, Tally } from "../reconcile/progress.js";
import { stderrOutput, type Reporter } from "../report/reporter.js";
import { cutToWidth, terminalColumns } from "./terminal-text.js";

/**
 * One line on stderr, rewritten in place, for long pushes and pulls: files, bytes and the time
 * left. Only when stderr is a terminal and the log is plain text at normal verbosity (never in a
 * pipe, a JSON log or --quiet), and only once a transfer has lasted SHOW_AFTER_MS (a short one
 * never flashes). It shows counts only, never names, so nothing in it needs escaping.
 */

const SHOW_AFTER_MS = 1000;
const UPDATE_EVERY_MS = 100;

export class ProgressLine {
  /** The line on screen now, if any. */
  private text: string | undefined;
  private last = 0;
  private startedAt: number | undefined;
  private readonly on: boolean;

  constructor(
    report: Reporter,
    // The reporter's guarded stderr: a reader that went away never crashes a pull.
    private readonly stream: { write(text: string): unknown; isTTY?: boolean; columns?: number } = stderrOutput(),
    private readonly now: () => number = Date.now,
  ) {
    this.on = stream.isTTY === true && report.format === "text" && report.verbosity === "normal";
    // The reporter's own lines go above it, never onto its end.
    if (this.on) report.statusLine = { hide: () => this.hide(), redraw: () => this.redraw() };
  }

  /** At most ten updates a second; the line is cleared once `done` reaches `total`. */
  update(what: Direction, done: Tally, total: Tally): void {
    if (!this.on) return;
    const now = this.now();
    this.startedAt ??= now;
    if (done.files >= total.files) return this.clear();
    if (now - this.startedAt < SHOW_AFTER_MS || now - this.last < UPDATE_EVERY_MS) return;
    this.last = now;
    // A line as wide as the terminal wraps, and \r would then redraw only its last row.
    this.text = cutToWidth(`uspark: ${progressText(what, done, total, now - this.startedAt)}`, terminalColumns(this.stream.columns) - 1);
    this.redraw();
  }

  clear(): void {
    this.hide();
    this.text = undefined;
    this.startedAt = undefined;
  }

  private hide(): void {
    if (this.text !== undefined) this.stream.write("\r\x1b[K");
  }

  private redraw(): void {
    if (this.text !== undefined) this.stream.write(`\r\x1b[K${this.text}`);
  }
}

/** "pushing 120/2000 files, 3.1/48.0 MiB, about 1 min 20 s left": the time left from the bytes' rate so far. */
export function progressText(what: Direction, done: Tally, total: Tally, elapsedMs: number): string {
  const text = `${what} ${done.files}/${total.files} files, ${formatBytes(done.bytes, total.bytes)}`;
  if (done.bytes <= 0 || elapsedMs <= 0 || total.bytes <= done.bytes) return text;
  const leftMs = ((total.bytes - done.bytes) * elapsedMs) / done.bytes;
  return `${text}, about ${formatDuration(leftMs)} left`;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** "3.1/48.0 MiB": both in the total's unit. */
export function formatBytes(done: number, total: number): string {
  let unit = 0;
  while (unit < UNITS.length - 1 && total >= 1024 ** (unit + 1)) unit++;
  const scale = (n: number) => (unit === 0 ? String(n) : (n / 1024 ** unit).toFixed(1));
  return `${scale(done)}/${scale(total)} ${UNITS[unit]}`;
}

/** "5 s", "1 min 20 s", "2 h 5 min". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
