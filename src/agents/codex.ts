import { moveChanges, needle, outcome, pending, PendingCalls, stringField, type PendingChange } from "./common.js";
import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Codex, `codex exec --json` (openai/codex codex-rs/exec/src/exec_events.rs and
 * event_processor_with_jsonl_output.rs): file edits are `file_change` items
 * `{ id, type: "file_change", changes: [{ path, kind: "add" | "update" | "delete" }], status }`.
 * Newer versions announce the item with `item.started` / `item.updated` (status `in_progress`)
 * before its `item.completed`; older ones send only `item.completed`. Only status `completed`
 * confirms; the paths of a `failed` one (which includes a declined patch) are reported unconfirmed,
 * since a patch that half applied wrote some of them.
 *
 * The JSONL item does not say where a renamed file went (Codex maps `Update { move_path }` to a
 * bare `update`): the old path is reported as written, and is missing at flush time, so the sync
 * deletes it; the new one is left to the file watcher. A `move_path` on the change (or a `kind`
 * object `{ type, move_path }`, as Codex's app-server protocol has it) is read when present.
 */
export const codex: AgentFormat = {
  name: "codex",
  detect: (event) => isObject(event) && typeof event.type === "string" && CODEX_EVENT_TYPES.has(event.type),
  create: (emit) => new CodexParser(emit),
};

const CODEX_EVENT_TYPES = new Set([
  "thread.started",
  "turn.started",
  "turn.completed",
  "turn.failed",
  "item.started",
  "item.updated",
  "item.completed",
]);

const CAUSE = "apply_patch";
const FILE_CHANGE = needle("file_change");

class CodexParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change));

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (!line.includes(FILE_CHANGE)) return;
    const event = parseEvent(line);
    const item = event?.item;
    if (event === undefined || !isObject(item) || item.type !== "file_change") return;
    const id = typeof item.id === "string" ? item.id : undefined;
    const changes = changesOf(item);
    switch (event.type) {
      case "item.started":
      case "item.updated":
        if (id !== undefined) this.pending.add(id, changes);
        break;
      case "item.completed":
        if (item.status === "completed" || item.status === "failed" || item.status === "declined") {
          // A failed patch may have written some of its files before a hunk did not apply: each
          // path it named is reported unconfirmed, and the sync checks it by hash.
          const confirmed = item.status === "completed";
          const announced = id === undefined ? undefined : this.pending.take(id);
          for (const change of changes.length > 0 ? changes : (announced ?? [])) this.emit(outcome(change, confirmed));
        } else if (id !== undefined) {
          this.pending.add(id, changes); // still in progress: its outcome may yet come
        }
        break;
    }
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }
}

/** The changes a `file_change` item lists (also read by the conversation reader). */
export function changesOf(item: Record<string, unknown>): PendingChange[] {
  if (!Array.isArray(item.changes)) return [];
  const changes: PendingChange[] = [];
  for (const change of item.changes) {
    const path = stringField(change, "path");
    if (path === undefined || !isObject(change)) continue;
    const kind = isObject(change.kind) ? stringField(change.kind, "type") : change.kind;
    const movedTo = stringField(change, "move_path", "movePath") ?? stringField(change.kind, "move_path", "movePath");
    if (kind === "delete") changes.push(pending(path, "delete", CAUSE));
    else if (movedTo !== undefined && movedTo !== path) changes.push(...moveChanges(path, movedTo, CAUSE));
    // add, update, and a kind this parser does not know: the file at `path` changed somehow,
    // and reading it at flush time tells what it now is.
    else changes.push(pending(path, "write", CAUSE));
  }
  return changes;
}
