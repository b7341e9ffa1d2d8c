import { readFileSync } from "node:fs";
import path from "node:path";

/** Nothing listens on this port (discard): every request is refused, and retried until the flush timeout. */
export const UNREACHABLE = "http://127.0.0.1:9";

let nextId = 0;
/** One Claude Write call and its successful result, as two stream-json lines. */
export function writeEvents(file: string, content = "x"): string {
  const id = `toolu_${++nextId}`;
  return (
    JSON.stringify({ type: "assistant", session_id: "s", message: { content: [{ type: "tool_use", id, name: "Write", input: { file_path: file, content } }] } }) +
    "\n" +
    JSON.stringify({ type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } }) +
    "\n"
  );
}

/** The remote paths in `<root>/.uspark/pending.json`. */
export function journaledPaths(root: string): string[] {
  const journal = JSON.parse(readFileSync(path.join(root, ".uspark", "pending.json"), "utf8")) as { entries: { path: string }[] };
  return journal.entries.map((entry) => entry.path).sort();
}
