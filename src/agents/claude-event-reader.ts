import { ARRAY, LITERAL, OBJECT, STRING, type JsonScanner, type ScanHandler } from "./json-scanner.js";
import type { SkippedString } from "./sparse-json.js";

/**
 * A content block, as far as the parser cares. Each is made with every member (undefined until
 * read), and `paths` with a slot for each path field: objects and arrays of one shape, so the
 * code V8 compiles for the first blocks holds for all of them.
 */
export interface Block {
  type?: string;
  id?: string;
  name?: string;
  toolUseId?: string;
  isError?: unknown;
  /** The input members that may hold a path, by their index in `EventReader.pathFields`. */
  paths?: Array<string | undefined>;
}

/**
 * `stopsFrom` when the scan must not stop in this piece: past any position in one (a piece is a
 * chunk of the stream, or a tail held up to `HOLD_BYTES`). Not Infinity: this is a small integer
 * to V8, and a field that once holds a double changes the reader's hidden class, which throws
 * away the code compiled for it.
 */
export const NO_STOP = 2 ** 30 - 1;

// Which field the next scalar is.
const F_NONE = 0;
const F_TYPE = 1;
const F_SUBTYPE = 2;
const F_CWD = 3;
const B_TYPE = 4;
const B_ID = 5;
const B_NAME = 6;
const B_TOOL_USE_ID = 7;
const B_IS_ERROR = 8;
const B_PATH = 9;

/**
 * Collects from one event what the parser needs: `type`, `subtype`, `cwd`, and of each block of
 * `message.content` its `type`, `id`, `name`, `tool_use_id`, `is_error` and the path fields of
 * its `input`. It stops the scan as soon as the rest of the line could only matter by holding
 * another `"tool_use"` (the parser looks for that needle), or not at all (another event type).
 */
export class EventReader implements ScanHandler {
  scanner!: JsonScanner;
  type: string | undefined;
  subtype: string | undefined;
  cwd: string | undefined;
  blocks: Block[] = [];
  /** The event is of a type that never matters: the scan stopped for good. */
  discard = false;
  /** No stop before this position of the piece being read (a "tool_use" is still ahead); `NO_STOP`: none. */
  stopsFrom = 0;
  /** The event's `message` was read to its end. */
  private messageRead = false;
  private block: Block | undefined;
  private field = F_NONE;
  private pathIndex = 0;
  /** Every input member that some tool takes its path from. */
  private readonly pathFields: string[];
  /** For each tool, the indexes in `pathFields` of its path members, in order of preference. */
  private readonly toolPaths = new Map<string, number[]>();
  /** The member names the scanner is to tell apart. */
  readonly keys: string[];

  constructor(tools: Record<string, readonly string[]>) {
    this.pathFields = [...new Set(Object.values(tools).flat())];
    for (const [tool, fields] of Object.entries(tools))
      this.toolPaths.set(
        tool,
        fields.map((field) => this.pathFields.indexOf(field)),
      );
    this.keys = ["type", "subtype", "cwd", "message", "content", "id", "name", "tool_use_id", "is_error", "input", ...this.pathFields];
  }

  /** The path a write tool's block names: its first path member that is a non-empty string. */
  pathOf(block: Block): string | undefined {
    const indexes = block.name === undefined ? undefined : this.toolPaths.get(block.name);
    if (indexes === undefined || block.paths === undefined) return undefined;
    for (const index of indexes) {
      const path = block.paths[index];
      if (path !== undefined && path !== "") return path;
    }
    return undefined;
  }

  reset(): void {
    this.type = this.subtype = this.cwd = undefined;
    this.blocks = [];
    this.block = undefined;
    this.discard = false;
    this.stopsFrom = 0;
    this.messageRead = false;
    this.field = F_NONE;
  }

  begin(depth: number, key: string | number | null, kind: number): boolean {
    switch (depth) {
      case 0:
        return kind === OBJECT;
      case 1: // the event's members
        if (kind === STRING) {
          if (key === "type") return this.want(F_TYPE);
          if (key === "subtype") return this.want(F_SUBTYPE);
          if (key === "cwd") return this.want(F_CWD);
        }
        if (key === "message" && kind === OBJECT) return true;
        return this.skip();
      case 2: // message's
        if (key === "content" && kind === ARRAY) return true;
        return this.skip();
      case 3: // content's items
        if (kind !== OBJECT) return this.skip();
        this.block = { type: undefined, id: undefined, name: undefined, toolUseId: undefined, isError: undefined, paths: undefined };
        this.blocks.push(this.block);
        return true;
      case 4: {
        // a block's members
        const block = this.block!;
        if (kind === STRING) {
          if (key === "type") return this.want(B_TYPE);
          if (key === "id") return this.want(B_ID);
          if (key === "name") return this.want(B_NAME);
          if (key === "tool_use_id") return this.want(B_TOOL_USE_ID);
        } else if (kind === LITERAL && key === "is_error") return this.want(B_IS_ERROR);
        else if (kind === OBJECT && key === "input" && !this.settled(block)) return true;
        return this.skip();
      }
      case 5: {
        // input's members
        const index = kind === STRING && typeof key === "string" ? this.pathFields.indexOf(key) : -1;
        if (index === -1) return this.skip();
        this.pathIndex = index;
        return this.want(B_PATH);
      }
      default:
        return this.skip();
    }
  }

  scalar(value: string | number | boolean | null | SkippedString): void {
    const field = this.field;
    this.field = F_NONE;
    if (field === B_IS_ERROR) {
      this.block!.isError = value;
      return;
    }
    if (typeof value !== "string") return; // a SkippedString: too long to be any of these
    switch (field) {
      case F_TYPE:
        this.type = value;
        break;
      case F_SUBTYPE:
        this.subtype = value;
        break;
      case F_CWD:
        this.cwd = value;
        break;
      case B_TYPE:
        this.block!.type = value;
        break;
      case B_ID:
        this.block!.id = value;
        break;
      case B_NAME:
        this.block!.name = value;
        break;
      case B_TOOL_USE_ID:
        this.block!.toolUseId = value;
        break;
      case B_PATH:
        (this.block!.paths ??= new Array<string | undefined>(this.pathFields.length).fill(undefined))[this.pathIndex] = value;
        break;
    }
  }

  end(depth: number): void {
    if (depth === 3) this.block = undefined;
    else if (depth === 1) this.messageRead = true;
  }

  private want(field: number): true {
    this.field = field;
    return true;
  }

  /**
   * Passes over a value; and stops the scan there if nothing after it can matter but a
   * "tool_use". A user event is read no further than its message: what follows it in Claude
   * Code's own (`tool_use_result`: a written file's content, an edited file's original and its
   * patch) can be far longer than the message, and tells nothing a result block does not.
   */
  private skip(): false {
    const type = this.type;
    if (type === undefined) return false;
    if (type === "assistant") {
      if (this.scanner.position >= this.stopsFrom && (this.block === undefined || this.settled(this.block))) this.scanner.stop();
    } else if (type === "user") {
      if (this.messageRead && this.scanner.position >= this.stopsFrom) this.scanner.stop();
    } else if (type !== "system") {
      this.discard = true;
      this.scanner.stop();
    }
    return false;
  }

  /** Is all read that this block can tell? */
  private settled(block: Block): boolean {
    if (block.type === undefined) return false;
    if (block.type !== "tool_use") return true;
    if (block.name === undefined) return false;
    const indexes = this.toolPaths.get(block.name);
    if (indexes === undefined) return true;
    // Settled once the preferred path member is read: no later member could take its place.
    const path = block.paths?.[indexes[0]!];
    return block.id !== undefined && path !== undefined && path !== "";
  }
}
