import { Writable } from "node:stream";
import type Picocolors from "picocolors";
import { requireCjs } from "../util/cjs.js";
import { createConversationReader, type ConversationReader, type Step } from "../agents/conversation/index.js";
import { escapeControl, type ReportRecord } from "../report/reporter.js";
import { DEFAULT_DETECT_MAX_BYTES, DEFAULT_DETECT_MAX_EVENTS } from "../agents/detect.js";
import { LineSplitter } from "../stream/lines.js";
import { cutToWidth, terminalColumns } from "./terminal-text.js";

const pc = requireCjs("picocolors") as typeof Picocolors;
type Colors = ReturnType<typeof pc.createColors>;
type ToolStep = Extract<Step, { kind: "tool" }>;
type ResultStep = Extract<Step, { kind: "result" }>;

/**
 * `uspark run` with stdout on a terminal (docs/agents.md#the-run-view): a person's view of the agent's stream
 * instead of its JSON lines. One line per finished tool call and per synced change, and at the
 * very end the agent's own result or failure reason. Lines that are no JSON event (an agent's
 * plain text) are shown as they came. Every line of ours is escaped and cut to the terminal's
 * width. A JSON stream no agent's reader recognises is shown as it came too. `--raw`,
 * a pipe or a file get the agent's bytes instead (the view is never used there).
 */

export interface Terminal {
  write(text: string | Buffer, done?: (error?: Error | null) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  readonly columns?: number;
}

export interface RunViewOptions {
  terminal: Terminal;
  /** The agent's stream format (`--agent`, or from the command's name); detected when unknown. */
  format?: string;
  /** Paths under this directory are shown relative to it (the project root). */
  root: string;
  color: boolean;
}

/** The view is for a person at a terminal; `--raw` or anything else gets the bytes unchanged. */
export function runViewWanted(raw: boolean | undefined, stdoutIsTTY: boolean | undefined): boolean {
  return raw !== true && stdoutIsTTY === true;
}

/** A Writable the session copies the agent's stdout into, as it would into stdout itself. */
export class RunView extends Writable {
  private readonly reader: ConversationReader;
  private readonly lines: LineSplitter;
  private readonly colors: Colors;
  private readonly terminal: Terminal;
  private readonly rootPrefix: string;
  /** Said at the very end, after the last sync: the agent's result or failure. */
  private readonly results: ResultStep[] = [];
  /** JSON lines read while the format is unknown, and whether the stream turned out unreadable. */
  private unread: Buffer[] = [];
  private unreadBytes = 0;
  private unreadable = false;
  /** Our lines of the chunk being written, and its plain-text lines, in order. */
  private pending: (string | Buffer)[] = [];

  constructor(options: RunViewOptions) {
    super();
    this.terminal = options.terminal;
    this.rootPrefix = options.root.endsWith("/") ? options.root : `${options.root}/`;
    this.reader = createConversationReader(options.format);
    this.colors = pc.createColors(options.color);
    this.lines = new LineSplitter((line) => this.line(line));
    // The terminal's errors are the session's output errors (EPIPE: a closed pane, said quietly).
    this.terminal.on("error", (error) => this.destroy(error));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.lines.push(chunk);
    this.flushLines(done);
  }

  /** A synced change, from the watcher's report events; true when shown here (commits, and what a two-way run pulled). */
  report(record: ReportRecord): boolean {
    const mark = record.event === "commit" ? this.colors.green("↑") : record.event === "pulled" ? this.colors.cyan("↓") : undefined;
    if (mark === undefined) return false;
    this.show(`${mark} ${this.cut(escapeControl(record.message), 2)}`);
    this.flushLines(() => undefined);
    return true;
  }

  /** The run is over: calls that never got a result, then the agent's result or failure. */
  finish(): Promise<void> {
    this.lines.end();
    if (this.reader.format === undefined) this.showUnread();
    // Calls still running when the stream ended: shown as they are ("no result").
    for (const step of this.reader.end()) step.kind === "tool" ? this.show(this.toolLine(step)) : this.step(step);
    for (const step of this.results.splice(0)) this.pending.push(...this.resultLines(step));
    return new Promise((resolve) => this.flushLines(() => resolve()));
  }

  private line(line: Buffer): void {
    if (firstByte(line) !== 0x7b) return void this.pending.push(Buffer.concat([line, NEWLINE]));
    const steps = this.reader.line(line);
    this.holdUnread(line);
    for (const step of steps) this.step(step);
  }

  /**
   * While the format is unknown, JSON lines are kept (as the reader's detection keeps events, within
   * its limits): once it is known they are steps; a stream no reader recognises by the limits or the
   * end is shown as it came rather than not at all.
   */
  private holdUnread(line: Buffer): void {
    if (this.reader.format !== undefined) return void (this.unread = []);
    const copy = Buffer.concat([line, NEWLINE]);
    if (this.unreadable) return void this.pending.push(copy);
    this.unread.push(copy);
    this.unreadBytes += copy.length;
    if (this.unread.length >= DEFAULT_DETECT_MAX_EVENTS || this.unreadBytes >= DEFAULT_DETECT_MAX_BYTES) this.showUnread();
  }

  private showUnread(): void {
    this.unreadable = true;
    this.pending.push(...this.unread.splice(0));
  }

  private step(step: Step): void {
    // A call is shown once, when it is over; the agent's words and the prompt are left to --raw.
    if (step.kind === "result") this.results.push(step);
    else if (step.kind === "tool" && step.status !== "running") this.show(this.toolLine(step));
  }

  private toolLine(step: ToolStep): string {
    const c = this.colors;
    const mark = step.status === "ok" ? c.green("✓") : step.status === "failed" ? c.red("✗") : c.dim("…");
    const why = step.status === "failed" && step.error ? `: ${firstLine(step.error)}` : step.status === "running" ? " (no result)" : "";
    const summary = firstLine(step.summary).split(this.rootPrefix).join("");
    const text = this.cut(escapeControl(`${step.name} ${summary}${why}`), 2);
    const space = text.indexOf(" ");
    return `${mark} ${space === -1 ? c.bold(text) : c.bold(text.slice(0, space)) + text.slice(space)}`;
  }

  private resultLines(step: ResultStep): string[] {
    const c = this.colors;
    const head = step.ok ? c.green("✓ done") : c.red("✗ failed");
    const lines = step.text.replace(/\r\n/g, "\n").split("\n");
    return [
      `${head}${lines[0] ? ": " : ""}${this.cut(escapeControl(lines[0] ?? ""), step.ok ? 8 : 10)}`,
      ...lines.slice(1).map((l) => this.cut(escapeControl(l), 0)),
    ].map((l) => l + "\n");
  }

  private show(line: string): void {
    this.pending.push(line + "\n");
  }

  private cut(text: string, used: number): string {
    return cutToWidth(text, Math.max(10, terminalColumns(this.terminal.columns) - used));
  }

  /** Writes what the lines so far produced, then calls `done` (after the terminal took it: backpressure). */
  private flushLines(done: (error?: Error | null) => void): void {
    const out = this.pending;
    this.pending = [];
    if (out.length === 0 || this.destroyed) return done();
    const text = Buffer.concat(out.map((part) => (typeof part === "string" ? Buffer.from(part) : part)));
    this.terminal.write(text, (error) => done(error ?? null));
  }
}

const NEWLINE = Buffer.from("\n");

function firstByte(line: Buffer): number | undefined {
  let i = 0;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09)) i++;
  if (line[i] === 0xef && line[i + 1] === 0xbb && line[i + 2] === 0xbf) return firstByte(line.subarray(i + 3));
  return line[i];
}

function firstLine(text: string): string {
  const end = text.search(/\r?\n/);
  return end === -1 ? text : text.slice(0, end);
}
