import { claudeShaped } from "./claude-shaped.js";

const AMP_EVENT_TYPES = new Set(["system", "assistant", "user", "result"]);

/**
 * Amp, `amp --execute … --stream-json`: "Claude Code compatible" stream JSON
 * (ampcode.com/news/streaming-json, ampcode.com/manual/appendix) with Amp's tool names.
 * Its session id is the thread id, `T-<uuid>`, which is how it tells itself apart from Claude.
 * `undo_edit` also rewrites a file; its `path` field is assumed like the other two.
 */
export const AMP_TOOLS = {
  create_file: ["path", "file_path"],
  edit_file: ["path", "file_path"],
  undo_edit: ["path", "file_path"],
};

export const amp = claudeShaped({
  name: "amp",
  tools: AMP_TOOLS,
  detect: (event) =>
    typeof event.type === "string" &&
    AMP_EVENT_TYPES.has(event.type) &&
    typeof event.session_id === "string" &&
    /^T-[0-9a-f-]{8,}$/i.test(event.session_id),
});
