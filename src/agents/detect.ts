import { acai } from "./acai.js";
import { amp } from "./amp.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { copilot } from "./copilot.js";
import { cursor } from "./cursor.js";
import { droid } from "./droid.js";
import { gemini } from "./gemini.js";
import { kimi } from "./kimi.js";
import { opencode } from "./opencode.js";
import { qwen } from "./qwen.js";
import { parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";
import type { LineSink } from "../stream/lines.js";

/**
 * The order formats are asked in: the ones with a distinctive event first; then the streams
 * that copy Claude's shape and say who they are in their ids or init event (Droid, Cursor, Qwen,
 * Amp); the generic Claude shape last, since all of those would pass for it. No format claims a
 * line that only looks like one of its own: Claude's takes an init only by Claude's own fields,
 * and never a lone `result` (Auggie's one line copies its shape), so a look-alike waits for the
 * lines that say whose stream it is.
 */
export const DETECTION_ORDER: readonly AgentFormat[] = Object.freeze([
  codex,
  copilot,
  gemini,
  opencode,
  acai,
  kimi,
  droid,
  cursor,
  qwen,
  amp,
  claude,
]);

export interface AutoParserOptions {
  /** Give up after this many JSON object events without a match (default 64). */
  maxEvents?: number;
  /** Give up after this many bytes of input without a match, any lines counted (default 16 MiB). */
  maxBytes?: number;
  /** The formats to try, in order (default DETECTION_ORDER). */
  formats?: readonly AgentFormat[];
}

export const DEFAULT_DETECT_MAX_EVENTS = 64;
export const DEFAULT_DETECT_MAX_BYTES = 16 * 1024 * 1024;

const OPEN_BRACE = 0x7b;

/**
 * A parser for a stream of unknown format. It reads the first JSON object events, asks each
 * format whether an event is one of its own, and calls `onDetect` once: with the first format
 * that says yes, or with `undefined` when none has after `maxEvents` events or `maxBytes` bytes
 * (or at the end of a short stream). The events read while deciding are copied, then replayed
 * into the chosen format's parser, which gets every later line directly. After giving up,
 * lines are dropped at the cost of a function call. Lines that are not JSON objects are skipped.
 */
export function createAutoParser(
  emit: ChangeSink,
  onDetect: (format: AgentFormat | undefined) => void,
  options: AutoParserOptions = {},
): AgentParser & LineSink {
  return new AutoParser(emit, onDetect, options);
}

/** The auto-detecting parser: detecting until a format is chosen or it gives up, then forwarding or dropping. */
class AutoParser implements AgentParser, LineSink {
  private readonly formats: readonly AgentFormat[];
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  /** The events read while deciding, copied, to replay into the chosen format's parser. */
  private held: Buffer[] = [];
  private events = 0;
  private bytes = 0;
  private chosen: (AgentParser & LineSink) | undefined;
  private gaveUp = false;
  /** The pieces so far of a line that spans chunks, to be joined (while detecting). */
  private pieces: Buffer[] = [];
  /** The line that spans chunks goes to the chosen parser piece by piece. */
  private forwarding = false;

  constructor(
    private readonly emit: ChangeSink,
    private readonly onDetect: (format: AgentFormat | undefined) => void,
    options: AutoParserOptions,
  ) {
    this.formats = options.formats ?? DETECTION_ORDER;
    this.maxEvents = options.maxEvents ?? DEFAULT_DETECT_MAX_EVENTS;
    this.maxBytes = options.maxBytes ?? DEFAULT_DETECT_MAX_BYTES;
  }

  line(line: Buffer): void {
    if (this.chosen !== undefined) this.chosen.line(line);
    else if (!this.gaveUp) this.detecting(line);
  }

  lineIn(chunk: Buffer, start: number, end: number): void {
    if (this.chosen?.lineIn !== undefined) this.chosen.lineIn(chunk, start, end);
    else if (this.chosen !== undefined || !this.gaveUp) this.line(chunk.subarray(start, end));
  }

  /** A line that spans chunks: handed on in pieces to a parser that takes them, else joined. */
  linePart(part: Buffer, last: boolean): void {
    if (this.pieces.length === 0 && !this.forwarding) this.forwarding = this.chosen?.linePart !== undefined;
    if (this.forwarding) {
      if (last) this.forwarding = false;
      this.chosen!.linePart!(part, last);
      return;
    }
    if (this.gaveUp) return;
    if (!last) {
      this.pieces.push(Buffer.from(part)); // a copy: a piece is only valid during this call
      return;
    }
    const whole = Buffer.concat([...this.pieces, part]);
    this.pieces = [];
    this.line(whole);
  }

  lineDropped(): void {
    if (this.forwarding) this.chosen!.lineDropped?.();
    this.forwarding = false;
    this.pieces = [];
  }

  end(): void {
    if (this.chosen === undefined && !this.gaveUp) this.decide(undefined);
    this.chosen?.end();
  }

  private detecting(line: Buffer): void {
    this.bytes += line.length + 1;
    const json = objectBytes(line);
    if (json !== undefined) {
      const event = parseEvent(json);
      if (event !== undefined) {
        this.events++;
        this.held.push(Buffer.from(json)); // a copy: the line's buffer is only valid during this call
        const format = detectFormat(event, this.formats);
        if (format !== undefined) return this.decide(format);
      }
    }
    if (this.events >= this.maxEvents || this.bytes >= this.maxBytes) this.decide(undefined);
  }

  private decide(format: AgentFormat | undefined): void {
    const replay = this.held;
    this.held = [];
    if (format === undefined) {
      this.gaveUp = true;
      this.onDetect(undefined);
      return;
    }
    this.chosen = format.create(this.emit);
    this.onDetect(format);
    for (const line of replay) this.chosen.line(line);
  }
}

/** The first of `formats` that says the event is one of its own (a format that throws says no). */
export function detectFormat(event: Record<string, unknown>, formats: readonly AgentFormat[] = DETECTION_ORDER): AgentFormat | undefined {
  return formats.find((format) => {
    try {
      return format.detect(event);
    } catch {
      return false;
    }
  });
}

/** A line's bytes from its `{` on (a byte order mark and blanks before it skipped), or undefined for a line that is no object. */
export function objectBytes(line: Buffer): Buffer | undefined {
  const start = firstNonSpace(line);
  if (line[start] !== OPEN_BRACE) return undefined;
  return start === 0 ? line : line.subarray(start);
}

/** Skips leading whitespace and a UTF-8 byte order mark. */
function firstNonSpace(line: Buffer): number {
  let i = line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? 3 : 0;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0d)) i++;
  return i;
}
