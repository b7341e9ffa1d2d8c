import { DEFAULT_DETECT_MAX_EVENTS, detectFormat, objectBytes } from "./detect.js";
import { parseEvent } from "./sparse-json.js";
import type { AgentFormat } from "./types.js";
import { LineSplitter } from "../stream/lines.js";

/** Bytes of the stream looked at, at most: the first events tell whose stream it is. */
const DEFAULT_MAX_BYTES = 1024 * 1024;

/** What a `FormatCheck` tells, once at most, one or the other. */
export interface FormatCheckListener {
  /** The stream's first events are this other agent's. */
  other(format: AgentFormat): void;
  /** The whole stream was one JSON object, no agent's event: a final answer, not a stream (`claude -p --output-format json`). */
  oneObject(): void;
}

/**
 * Is the stream what it is read as? For one named agent's (`watch-claude`, `watch --agent`, `run`
 * of a known command): do its first events belong to another agent, the one auto-detection would
 * choose? Then that agent's tool events would go unread. For any stream: was it one lone object of
 * no agent's (`claude -p --output-format json`: the final answer, not a stream)? Longer streams of
 * unclaimed JSON are left alone: a parser may read events that detection, stricter, does not claim.
 * It reads its own copy of the first bytes (a line longer than its budget is skipped), so the
 * parser's path costs nothing; it is `done` once it decided, gave up, or the budget is spent.
 */
export class FormatCheck {
  done = false;
  private events = 0;
  private bytes = 0;
  private readonly splitter: LineSplitter;

  constructor(
    /** The agent named; undefined when the format is detected (only `oneObject` is told). */
    private readonly given: AgentFormat | undefined,
    private readonly listener: FormatCheckListener,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {
    this.splitter = new LineSplitter((line) => this.line(line), { maxLineLength: maxBytes });
  }

  push(bytes: Buffer): void {
    if (this.done) return;
    this.splitter.push(bytes.subarray(0, this.maxBytes - this.bytes));
    this.bytes += bytes.length;
    if (this.bytes >= this.maxBytes) this.done = true;
  }

  end(): void {
    if (this.done) return;
    this.splitter.end();
    if (!this.done && this.events === 1) this.listener.oneObject();
    this.done = true;
  }

  private line(line: Buffer): void {
    if (this.done) return;
    const json = objectBytes(line);
    const event = json === undefined ? undefined : parseEvent(json);
    if (event === undefined) return;
    const format = detectFormat(event);
    if (format !== undefined) {
      this.done = true;
      if (this.given !== undefined && format !== this.given) this.listener.other(format);
    } else if (++this.events >= DEFAULT_DETECT_MAX_EVENTS) {
      this.done = true;
    }
  }
}
