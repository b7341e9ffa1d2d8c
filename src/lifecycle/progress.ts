import { stderrOutput, type Reporter } from "../report.js";

/**
 * One line on stderr, rewritten in place, for long pulls: only when stderr is a terminal and the
 * log is plain text at normal verbosity (never in a pipe, a JSON log or --quiet). It shows counts
 * only, never names, so nothing in it needs escaping.
 */
export class ProgressLine {
  private shown = false;
  private last = 0;
  private readonly on: boolean;

  constructor(
    report: Reporter,
    // The reporter's guarded stderr: a reader that went away never crashes a pull.
    private readonly stream: { write(text: string): unknown; isTTY?: boolean } = stderrOutput(),
  ) {
    this.on = stream.isTTY === true && report.format === "text" && report.verbosity === "normal";
  }

  /** At most ten updates a second. */
  update(done: number, total: number, what: string): void {
    if (!this.on || (Date.now() - this.last < 100 && done < total)) return;
    this.last = Date.now();
    this.shown = true;
    this.stream.write(`\r\x1b[Kuspark: ${what} ${done}/${total}`);
  }

  clear(): void {
    if (this.shown) this.stream.write("\r\x1b[K");
    this.shown = false;
  }
}
