import { needle, Needle, pending, PendingCalls } from "./common.js";
import { EventReader, NO_STOP } from "./claude-event-reader.js";
import { JsonScanner } from "./json-scanner.js";
import { isObject, stringValueAfter } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Claude Code's stream-json, and the streams that copy its shape (Qwen Code, Amp): an
 * `assistant` event carries `tool_use` blocks; a later `user` event answers each with a
 * `tool_result` of the same id. The call is the intent, a result without `is_error` confirms it.
 * Sub-agent events (`parent_tool_use_id` set) have the same shape and count the same.
 */
export interface ClaudeShape {
  name: string;
  /** The tools that write a file, each with the input fields that may hold its path, in order. */
  tools: Record<string, readonly string[]>;
  detect(event: Record<string, unknown>): boolean;
}

export function claudeShaped(shape: ClaudeShape): AgentFormat {
  return {
    name: shape.name,
    detect: (event) => isObject(event) && shape.detect(event),
    create: (emit) => new ClaudeShapedParser(shape, emit),
  };
}

const TOOL_USE = new Needle("tool_use");
const TOOL_RESULT = needle("tool_result");
const INIT = needle("init");
const NAME_KEY = needle("name");
/** An escape a tool's name could hide behind (`"Ed\u0069t"`): such a line is read in full. */
const UNICODE_ESCAPE = Buffer.from("\\u");
/** How every event Claude Code writes begins: the event type is known from the first bytes. */
const TYPE_PREFIX = Buffer.from('{"type":"');
/** Enough of a line to read its type from that prefix ("stream_event" is the longest). */
const HEAD_BYTES = 32;
/**
 * Once a line's tool call is read, the rest of a line that spans chunks is held while it is
 * searched for another `"tool_use"`, up to this many bytes; past that it is read structurally as
 * it comes, so a line of any length costs no more memory than this.
 */
export const HOLD_BYTES = 8 * 1024 * 1024;

// What a line is, from its first bytes.
const GENERIC = 0; // not in Claude's own layout: decided by needles, read in full
const ASSISTANT = 1;
const USER = 2;
const SYSTEM = 3;
const OTHER = 4; // stream_event, result, …: never matters

// Where the parser is in the current line.
const NEW = 0; // between lines
const HEAD = 1; // too few bytes yet to read the type
const SKIP = 2; // the rest of this line cannot matter
const SCAN = 3; // the scanner reads the line
const TAIL = 4; // the line's tool calls are read; the rest is searched for another "tool_use"

/**
 * A line is decided from bytes before anything is decoded: its type from the first bytes when
 * it has Claude's layout, then a needle (`"tool_use"`, a pending call's id, `"init"`). The lines
 * that pass are read by a `JsonScanner` that decodes only the few fields that matter (types,
 * ids, tool names, paths, `is_error`) and passes over the rest (file contents, tool output).
 * Once a tool call's id, name and path are read, and no further `"tool_use"` follows in the line,
 * the rest is not read at all: a Write of a large file costs one `indexOf` over its content.
 * Lines that span chunks are read as they come, never joined.
 */
class ClaudeShapedParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change), { idKeys: ["tool_use_id"] });
  private cwd: string | undefined;
  private readonly reader: EventReader;
  private readonly scanner: JsonScanner;
  private readonly toolNames: ReadonlySet<string>;
  private state = NEW;
  private head: Buffer | undefined;
  /** The tail of the line in progress (state TAIL), copied: its pieces are only ours during a call. */
  private readonly held = new HeldBytes();
  /** The last byte other than whitespace seen in the tail. */
  private lastByte = 0;

  constructor(
    shape: ClaudeShape,
    private readonly emit: ChangeSink,
  ) {
    this.reader = new EventReader(shape.tools);
    this.scanner = new JsonScanner(this.reader, undefined, this.reader.keys);
    this.reader.scanner = this.scanner;
    this.toolNames = new Set(Object.keys(shape.tools));
  }

  line(line: Buffer): void {
    this.lineIn(line, 0, line.length);
  }

  /** A whole line in its chunk: most (`stream_event`, `result`) are passed over from their first bytes. */
  lineIn(chunk: Buffer, start: number, end: number): void {
    if (this.state !== NEW) this.lineDropped();
    const kind = lineKind(chunk, start, end);
    if (kind !== OTHER) this.startLine(start === 0 && end === chunk.length ? chunk : chunk.subarray(start, end), true, kind);
  }

  /** A piece of a line that spans chunks; `last` with its final piece. */
  linePart(part: Buffer, last: boolean): void {
    switch (this.state) {
      case NEW:
      case HEAD: {
        const piece = this.head === undefined ? part : Buffer.concat([this.head, part]);
        this.head = undefined;
        if (!last && piece.length < HEAD_BYTES) {
          this.head = Buffer.from(piece); // a copy: the piece is only ours during this call
          this.state = HEAD;
          return;
        }
        this.startLine(piece, last);
        return;
      }
      case SKIP:
        if (last) this.state = NEW;
        return;
      case SCAN:
        if (this.reader.stopsFrom !== NO_STOP) this.reader.stopsFrom = 0;
        this.scan(part, 0, last);
        return;
      case TAIL:
        this.tailPart(part, last);
        return;
    }
  }

  /** The line in progress was given up (too long): forget it. */
  lineDropped(): void {
    this.state = NEW;
    this.head = undefined;
    this.dropTail();
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }

  private startLine(piece: Buffer, whole: boolean, kind = lineKind(piece, 0, piece.length)): void {
    if (!this.mayMatter(kind, piece, whole)) {
      this.state = whole ? NEW : SKIP;
      return;
    }
    this.reader.reset();
    this.scanner.reset();
    this.state = SCAN;
    this.scan(piece, 0, whole);
  }

  /** Can this line change anything? `whole`: `line` is all of it, else only its first piece. */
  private mayMatter(kind: number, line: Buffer, whole: boolean): boolean {
    switch (kind) {
      case ASSISTANT:
        return !whole || (TOOL_USE.in(line) && this.namesATool(line));
      case USER:
        return this.pending.size > 0 && (!whole || this.pending.mentionedIn(line));
      case SYSTEM:
        return this.cwd === undefined && (!whole || line.includes(INIT));
      case OTHER:
        return false;
      default:
        if (!whole) return true;
        if (TOOL_USE.in(line) && this.namesATool(line)) return true;
        if (this.pending.size > 0 && line.includes(TOOL_RESULT) && this.pending.mentionedIn(line)) return true;
        return this.cwd === undefined && line.includes(INIT);
    }
  }

  /**
   * Does a line name one of the tools (`"name": "Edit"`) at all? One pass over the line, however
   * many tools the format knows. Only asked of short lines: on a long one reading the head of the
   * line answers sooner.
   */
  private namesATool(line: Buffer): boolean {
    if (line.length > 4096 || line.includes(UNICODE_ESCAPE)) return true;
    for (let at = line.indexOf(NAME_KEY); at !== -1; at = line.indexOf(NAME_KEY, at + NAME_KEY.length)) {
      const name = stringValueAfter(line, at + NAME_KEY.length);
      if (name !== undefined && this.toolNames.has(name)) return true;
    }
    return false;
  }

  private scan(buf: Buffer, from: number, last: boolean): void {
    let at = this.scanner.write(buf, from);
    while (at !== -1) {
      // The reader stopped: either the event is of no interest, or all it holds is read unless
      // another "tool_use" follows.
      if (this.reader.discard) {
        this.state = last ? NEW : SKIP;
        return;
      }
      const hit = TOOL_USE.indexIn(buf, at - 1);
      if (hit === -1) {
        if (!last) return this.startTail(buf, at);
        if (lastByteFrom(buf, at - 1, 0) === 0x7d) this.commit(); // } — as far as we can tell, valid
        this.state = NEW;
        return;
      }
      this.reader.stopsFrom = hit + TOOL_USE.bytes.length;
      at = this.scanner.write(buf, at);
    }
    if (last) {
      if (this.scanner.end()) this.commit();
      this.state = NEW;
    }
  }

  private startTail(buf: Buffer, at: number): void {
    const rest = buf.subarray(at);
    this.state = TAIL;
    this.held.clear();
    this.held.append(rest);
    this.lastByte = lastByteFrom(rest, 0, 0);
  }

  private tailPart(part: Buffer, last: boolean): void {
    const needle = TOOL_USE.bytes.length;
    // Where a "tool_use" ends in this piece, if one starts in the held tail or in this piece.
    let hitEnd = straddles(this.held.last(needle - 1), part, TOOL_USE.bytes) ? needle - 1 : -1;
    if (hitEnd === -1) {
      const hit = TOOL_USE.indexIn(part);
      if (hit !== -1) hitEnd = hit + needle;
    }
    if (hitEnd !== -1 || this.held.length + part.length > HOLD_BYTES) {
      // Read on from where the reader stopped: what was held, then this piece. After a needle
      // the reader may stop again once past it; after an overflow it reads to the end.
      this.state = SCAN;
      this.reader.stopsFrom = NO_STOP;
      this.scanner.write(this.held.bytes());
      this.dropTail();
      this.reader.stopsFrom = hitEnd === -1 ? NO_STOP : hitEnd;
      this.scan(part, 0, last);
      return;
    }
    this.held.append(part);
    this.lastByte = lastByteFrom(part, 0, this.lastByte);
    if (!last) return;
    if (this.lastByte === 0x7d) this.commit();
    this.dropTail();
    this.state = NEW;
  }

  private dropTail(): void {
    this.held.clear();
    this.lastByte = 0;
  }

  /** The line was read (and is valid JSON as far as it was read): act on it. */
  private commit(): void {
    const { type, blocks } = this.reader;
    if (type === "assistant") {
      for (const block of blocks) {
        if (block.type !== "tool_use" || block.id === undefined || block.name === undefined || block.paths === undefined) continue;
        const path = this.reader.pathOf(block);
        if (path !== undefined) this.pending.add(block.id, [pending(path, "write", block.name, this.cwd)]);
      }
    } else if (type === "user") {
      for (const block of blocks) {
        if (block.type !== "tool_result" || block.toolUseId === undefined) continue;
        if (block.isError === true) this.pending.take(block.toolUseId);
        else this.pending.confirm(block.toolUseId);
      }
    } else if (type === "system" && this.reader.subtype === "init" && this.reader.cwd !== undefined && this.cwd === undefined) {
      this.cwd = this.reader.cwd;
    }
  }
}

const KNOWN_TYPES: ReadonlyArray<[Buffer, number]> = [
  [Buffer.from('assistant"'), ASSISTANT],
  [Buffer.from('user"'), USER],
  [Buffer.from('system"'), SYSTEM],
];

/** What the type prefix of the line `buf[start, end)` (or of its first piece) says it is. */
function lineKind(buf: Buffer, start: number, end: number): number {
  const n = TYPE_PREFIX.length;
  if (end - start <= n + 1) return GENERIC;
  for (let i = 0; i < n; i++) if (buf[start + i] !== TYPE_PREFIX[i]) return GENERIC;
  // The type's closing quote, and what follows it, must be in sight: `{"type":"user","message"…`
  const name = start + n;
  let close = name;
  for (; close < end && close < name + 32; close++) {
    const c = buf[close];
    if (c === 0x22) break;
    if (c === 0x5c) return GENERIC; // an escape: let the scanner decode it
  }
  if (close + 1 >= end || buf[close] !== 0x22) return GENERIC;
  const after = buf[close + 1];
  if (after !== 0x2c && after !== 0x7d) return GENERIC; // , }
  next: for (const [known, kind] of KNOWN_TYPES) {
    if (close + 1 - name !== known.length) continue;
    for (let i = 0; i < known.length; i++) if (buf[name + i] !== known[i]) continue next;
    return kind;
  }
  return OTHER;
}

/**
 * Bytes appended into one buffer that grows as needed and is kept for the next line: a copy into
 * memory already used is cheap, fresh memory (page faults) is not.
 */
class HeldBytes {
  private buffer = Buffer.alloc(0);
  length = 0;

  append(part: Buffer): void {
    const length = this.length + part.length;
    if (length > this.buffer.length) {
      const bigger = Buffer.allocUnsafe(Math.max(length, 2 * this.buffer.length, 64 * 1024));
      this.buffer.copy(bigger, 0, 0, this.length);
      this.buffer = bigger;
    }
    part.copy(this.buffer, this.length);
    this.length = length;
  }

  /** What is held: a view, valid until the next `append` or `clear`. */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  /** The last `count` bytes held, or all if fewer. */
  last(count: number): Buffer {
    return this.buffer.subarray(Math.max(0, this.length - count), this.length);
  }

  clear(): void {
    this.length = 0;
  }
}

/** Does `needle` start within `edge` (the bytes before `part`) and end within `part`? */
function straddles(edge: Buffer, part: Buffer, needle: Buffer): boolean {
  // k: how many of the needle's bytes are at the end of the edge.
  next: for (let k = Math.min(edge.length, needle.length - 1); k >= 1; k--) {
    if (needle.length - k > part.length) continue;
    for (let i = 0; i < k; i++) if (edge[edge.length - k + i] !== needle[i]) continue next;
    for (let i = k; i < needle.length; i++) if (part[i - k] !== needle[i]) continue next;
    return true;
  }
  return false;
}

/** The last byte of `buf[from..]` that is not whitespace, or `otherwise`. */
function lastByteFrom(buf: Buffer, from: number, otherwise: number): number {
  for (let i = buf.length - 1; i >= from; i--) {
    const c = buf[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return otherwise;
}
