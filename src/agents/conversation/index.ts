import { DEFAULT_DETECT_MAX_BYTES, DEFAULT_DETECT_MAX_EVENTS, detectFormat, objectBytes } from "../detect.js";
import { parseEvent } from "../sparse-json.js";
import { createClaudeReader } from "./claude.js";
import { createAcaiReader } from "./acai.js";
import { createCodexReader } from "./codex.js";
import { createCopilotReader } from "./copilot.js";
import { createCursorReader } from "./cursor.js";
import { createDroidReader } from "./droid.js";
import { createGeminiReader } from "./gemini.js";
import { createKimiReader } from "./kimi.js";
import { createOpenCodeReader } from "./opencode.js";
import type { FamilyReader } from "./family.js";
import type { ConversationReader, Step } from "./types.js";

export type { ConversationReader, Step } from "./types.js";

/** The reader of each `--agent` format, by name. */
const READERS: Readonly<Record<string, () => FamilyReader>> = {
  claude: createClaudeReader,
  qwen: createClaudeReader,
  amp: createClaudeReader,
  codex: createCodexReader,
  gemini: createGeminiReader,
  opencode: createOpenCodeReader,
  cursor: createCursorReader,
  acai: createAcaiReader,
  kimi: createKimiReader,
  copilot: createCopilotReader,
  droid: createDroidReader,
};

/** The format names a conversation can be read in (every agent format). */
export const conversationFormats: readonly string[] = Object.freeze(Object.keys(READERS));

/**
 * A reader of one agent's stream as a conversation. `format`: an `--agent` name; anything else
 * ("auto", undefined, an unknown name) detects the format from the first JSON events, with the
 * change parsers' own detection (DETECTION_ORDER) and their limits: the events read meanwhile are
 * held (at most DEFAULT_DETECT_MAX_EVENTS events, DEFAULT_DETECT_MAX_BYTES bytes), then replayed;
 * when none is recognised by then, the stream yields no steps.
 */
export function createConversationReader(format?: string): ConversationReader {
  return new Reader(format !== undefined && Object.hasOwn(READERS, format) ? format : undefined);
}

/** An event read while the format is not known yet, with the bytes its long strings point into. */
interface Held {
  event: Record<string, unknown>;
  bytes: Buffer;
}

class Reader implements ConversationReader {
  format: string | undefined;
  private family: FamilyReader | undefined;
  private held: Held[] = [];
  private heldBytes = 0;
  private gaveUp = false;
  /** The last step returned, so that a result said twice in a row is said once. */
  private last: Step | undefined;

  constructor(format: string | undefined) {
    if (format !== undefined) this.choose(format);
  }

  line(line: string | Buffer): Step[] {
    try {
      if (this.gaveUp) return [];
      const bytes = eventBytes(line, this.family === undefined);
      const event = bytes === undefined ? undefined : parseEvent(bytes);
      if (this.family !== undefined) return this.once(event === undefined ? [] : this.family.event(event));
      return this.once(this.detecting(event, bytes, typeof line === "string" ? Buffer.byteLength(line) : line.length));
    } catch {
      return []; // a reader never throws on what an agent wrote
    }
  }

  end(): Step[] {
    try {
      if (this.family === undefined) this.held = [];
      return this.once(this.family?.end() ?? []);
    } catch {
      return [];
    }
  }

  /**
   * The steps without a result that repeats the one just said: an `error` then a `turn.failed` with
   * the same reason (Codex, Gemini), or Claude's two `result`s after a background agent's turn.
   */
  private once(steps: Step[]): Step[] {
    const out: Step[] = [];
    for (const step of steps) {
      const last = this.last;
      if (step.kind === "result" && last?.kind === "result" && last.ok === step.ok && last.text === step.text) continue;
      out.push(step);
      this.last = step;
    }
    return out;
  }

  private detecting(event: Record<string, unknown> | undefined, bytes: Buffer | undefined, size: number): Step[] {
    this.heldBytes += size + 1;
    if (event !== undefined && bytes !== undefined) {
      this.held.push({ event, bytes });
      const found = detectFormat(event);
      if (found !== undefined) return this.replay(found.name);
    }
    if (this.held.length >= DEFAULT_DETECT_MAX_EVENTS || this.heldBytes >= DEFAULT_DETECT_MAX_BYTES) {
      this.gaveUp = true;
      this.held = [];
    }
    return [];
  }

  private replay(format: string): Step[] {
    const held = this.held;
    this.held = [];
    this.choose(format);
    return held.flatMap(({ event }) => this.family!.event(event));
  }

  private choose(format: string): void {
    this.format = format;
    this.family = READERS[format]!();
  }
}

const OPEN_BRACE = 0x7b;

/** A line's bytes from its `{` on (a byte order mark and blanks before it skipped), or undefined for a line that is not an object. */
function eventBytes(line: string | Buffer, copy: boolean): Buffer | undefined {
  if (typeof line === "string") {
    const start = firstNonSpaceOfString(line);
    return line.charCodeAt(start) === OPEN_BRACE ? Buffer.from(start === 0 ? line : line.slice(start)) : undefined;
  }
  const bytes = objectBytes(line);
  // A held event's long strings point into its bytes after this call: they must be ours.
  return copy && bytes !== undefined ? Buffer.from(bytes) : bytes;
}

/** Skips leading whitespace and a byte order mark (U+FEFF, as a decoded line holds it). */
function firstNonSpaceOfString(line: string): number {
  let i = line.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (i < line.length && (line[i] === " " || line[i] === "\t" || line[i] === "\r")) i++;
  return i;
}
