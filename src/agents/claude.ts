import { AMP_TOOLS } from "./amp.js";
import { claudeShaped } from "./claude-shaped.js";
import { QWEN_TOOLS } from "./qwen.js";

const CLAUDE_EVENT_TYPES = new Set(["system", "assistant", "user", "result", "stream_event"]);

/**
 * Claude Code, `claude -p --output-format stream-json --verbose` (and the Agent SDK's messages).
 * It also reads the tool names of the streams that copy its shape (Qwen Code, Amp): one of those
 * that does not say who it is (an init without Qwen's fields, a session id not like Amp's) is
 * taken for Claude's, and its edits must not be lost for that. No name clashes: Claude's tools
 * are capitalised, MCP tools are `mcp__server__tool`.
 */
export const claude = claudeShaped({
  name: "claude",
  tools: {
    Edit: ["file_path"],
    Write: ["file_path"],
    MultiEdit: ["file_path"],
    NotebookEdit: ["notebook_path"],
    ...QWEN_TOOLS,
    ...AMP_TOOLS,
  },
  detect: (event) => typeof event.type === "string" && CLAUDE_EVENT_TYPES.has(event.type) && "session_id" in event,
});
