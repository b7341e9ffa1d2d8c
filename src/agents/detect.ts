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
export const DETECTION_ORDER: readonly AgentFormat[] = Object.freeze([codex, copilot, gemini, opencode, acai, kimi, droid, cursor, qwen, amp, claude]);

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
  const formats = options.formats ?? DETECTION_ORDER;
  const maxEvents = options.maxEvents ?? DEFAULT_DETECT_MAX_EVENTS;
  const maxBytes = options.maxBytes ?? DEFAULT_DETECT_MAX_BYTES;

  let held: Buffer[] = [];
  let events = 0;
  let bytes = 0;
  let chosen: (AgentParser & LineSink) | undefined;
  let gaveUp = false;

  const decide = (format: AgentFormat | undefined): void => {
    const replay = held;
    held = [];
    if (format === undefined) {
      gaveUp = true;
      onDetect(undefined);
      return;
    }
    chosen = format.create(emit);
    onDetect(format);
    for (const line of replay) chosen.line(line);
  };

  const detecting = (line: Buffer): void => {
    bytes += line.length + 1;
    const start = firstNonSpace(line);
    if (line[start] === OPEN_BRACE) {
      const json = start === 0 ? line : line.subarray(start);
      const event = parseEvent(json);
      if (event !== undefined) {
        events++;
        held.push(Buffer.from(json)); // a copy: the line's buffer is only valid during this call
        const format = detectFormat(event, formats);
        if (format !== undefined) return decide(format);
      }
    }
    if (events >= maxEvents || bytes >= maxBytes) decide(undefined);
  };

  // A line that spans chunks: handed on in pieces to a parser that takes them, else joined.
  let pieces: Buffer[] = [];
  let forwarding = false;

  return {
    line(line: Buffer): void {
      if (chosen !== undefined) chosen.line(line);
      else if (!gaveUp) detecting(line);
    },
    lineIn(chunk: Buffer, start: number, end: number): void {
      if (chosen?.lineIn !== undefined) chosen.lineIn(chunk, start, end);
      else if (chosen !== undefined || !gaveUp) this.line(chunk.subarray(start, end));
    },
    linePart(part: Buffer, last: boolean): void {
      if (pieces.length === 0 && !forwarding) forwarding = chosen?.linePart !== undefined;
      if (forwarding) {
        if (last) forwarding = false;
        chosen!.linePart!(part, last);
        return;
      }
      if (gaveUp) return;
      if (!last) {
        pieces.push(Buffer.from(part)); // a copy: a piece is only valid during this call
        return;
      }
      const whole = Buffer.concat([...pieces, part]);
      pieces = [];
      this.line(whole);
    },
    lineDropped(): void {
      if (forwarding) chosen!.lineDropped?.();
      forwarding = false;
      pieces = [];
    },
    end(): void {
      if (chosen === undefined && !gaveUp) decide(undefined);
      chosen?.end();
    },
  };
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

/** Skips leading whitespace and a UTF-8 byte order mark. */
export function firstNonSpace(line: Buffer): number {
  let i = line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? 3 : 0;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0d)) i++;
  return i;
}
