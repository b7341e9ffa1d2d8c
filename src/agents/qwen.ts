import { claudeShaped } from "./claude-shaped.js";

/**
 * Qwen Code, `qwen -p … --output-format stream-json`: Claude Code's event shapes
 * (QwenLM/qwen-code packages/cli/src/nonInteractive/types.ts) with Qwen's own tool names.
 * Its `system` events carry `qwen_code_version`, and its init `permission_mode` (Claude's
 * says `permissionMode`): that is how it tells itself apart from Claude.
 */
export const QWEN_TOOLS = {
  write_file: ["file_path", "path"],
  edit: ["file_path", "path"],
  replace: ["file_path", "path"],
};

export const qwen = claudeShaped({
  name: "qwen",
  tools: QWEN_TOOLS,
  detect: (event) =>
    event.type === "system" && (typeof event.qwen_code_version === "string" || (event.subtype === "init" && "permission_mode" in event)),
});
