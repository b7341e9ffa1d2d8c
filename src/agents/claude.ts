import { AMP_TOOLS } from "./amp.js";
import { claudeShaped } from "./claude-shaped.js";
import { QWEN_TOOLS } from "./qwen.js";
import { isObject } from "./sparse-json.js";

/** Fields of Claude Code's init that the look-alikes (Droid, Cursor's has two of them but is asked first) do not carry. */
const CLAUDE_INIT_FIELDS = ["claude_code_version", "apiKeySource", "permissionMode"];

/** The tools that write a file in a stream of Claude's shape (its own, Qwen's, Amp's), each with the input fields that may hold the path. */
export const CLAUDE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Edit: ["file_path"],
  Write: ["file_path"],
  MultiEdit: ["file_path"],
  NotebookEdit: ["notebook_path"],
  ...QWEN_TOOLS,
  ...AMP_TOOLS,
};

/**
 * Claude Code, `claude -p --output-format stream-json --verbose` (and the Agent SDK's messages).
 * It also reads the tool names of the streams that copy its shape (Qwen Code, Amp): one of those
 * that does not say who it is (an init without Qwen's fields, a session id not like Amp's) is
 * taken for Claude's, and its edits must not be lost for that. No name clashes: Claude's tools
 * are capitalised, MCP tools are `mcp__server__tool`.
 */
export const claude = claudeShaped({
  name: "claude",
  tools: CLAUDE_TOOLS,
  detect: isClaudeEvent,
});

/**
 * A message (`assistant`, `user`, `stream_event`) with a session id, or an init with Claude's own
 * fields. Not a `result`: Auggie's one JSON line has that shape, and a Claude stream has its
 * init and messages before it anyway. Nor an init without those fields (Factory Droid's): the
 * messages after it tell.
 */
function isClaudeEvent(event: Record<string, unknown>): boolean {
  if (!("session_id" in event)) return false;
  switch (event.type) {
    case "assistant":
    case "user":
      return isObject(event.message);
    case "stream_event":
      return true;
    case "system":
      return event.subtype === "init" && CLAUDE_INIT_FIELDS.some((field) => field in event);
    default:
      return false;
  }
}
