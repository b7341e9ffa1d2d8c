import { claudeShaped } from "./claude-shaped.js";

const CLAUDE_EVENT_TYPES = new Set(["system", "assistant", "user", "result", "stream_event"]);

/** Claude Code, `claude -p --output-format stream-json --verbose` (and the Agent SDK's messages). */
export const claude = claudeShaped({
  name: "claude",
  tools: {
    Edit: ["file_path"],
    Write: ["file_path"],
    MultiEdit: ["file_path"],
    NotebookEdit: ["notebook_path"],
  },
  detect: (event) => typeof event.type === "string" && CLAUDE_EVENT_TYPES.has(event.type) && "session_id" in event,
});
