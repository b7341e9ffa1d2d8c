import path from "node:path";
import { BIN, conformance, type AgentCase } from "./harness.js";

/**
 * OpenCode: its `openai` provider pointed at loopback through `OPENCODE_CONFIG_CONTENT` (a GPT
 * model, so it offers `apply_patch`), every permission granted, models fetch, updates, sharing,
 * LSP downloads and default plugins off.
 */
const opencode: AgentCase = {
  agent: "opencode",
  command: (prompt) => [path.join(BIN, "opencode"), ["run", "--format", "json", "--print-logs", "--log-level", "WARN", prompt]],
  setup: (home, _project, modelUrl) => {
    const config = {
      autoupdate: false,
      share: "disabled",
      model: "openai/gpt-5.3-codex",
      small_model: "openai/gpt-5.3-codex",
      provider: { openai: { options: { baseURL: `${modelUrl}/v1`, apiKey: "dummy" } } },
      permission: { edit: "allow", bash: "allow", external_directory: "allow" },
    };
    return {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_DATA_HOME: path.join(home, ".local", "share"),
    };
  },
  scripts: (p) => {
    const patch = (...lines: string[]) => ({ tool: "apply_patch", input: { patchText: ["*** Begin Patch", ...lines, "*** End Patch"].join("\n") } });
    return [
      [
        "SCRIPT:main",
        [
          patch(`*** Add File: ${p}/new.txt`, "+new"),
          patch(`*** Update File: ${p}/edit.txt`, "@@", "-alpha", "+ALPHA"),
          patch(`*** Update File: ${p}/multi.txt`, "@@", "-one", "+ONE", "@@", "-three", "+THREE"),
          patch(`*** Update File: ${p}/p1.txt`, "@@", "-patch one", "+PATCH ONE", `*** Update File: ${p}/p2.txt`, "@@", "-patch two", "+PATCH TWO"),
          // A write that fails halfway (a file where a directory must be) leaves the first file written.
          patch(`*** Update File: ${p}/half1.txt`, "@@", "-half one", "+HALF ONE", `*** Add File: ${p}/sub/keep.txt/inner.txt`, "+x"),
          patch(`*** Update File: ${p}/old-name.txt`, `*** Move to: ${p}/new-name.txt`, "@@", "-rename me", "+renamed"),
          patch(`*** Delete File: ${p}/doomed.txt`),
          { tool: "bash", input: { command: "echo shell > shell.txt", description: "write a file from the shell" } },
          { tool: "task", input: { description: "write a file", prompt: "SCRIPT:sub: write the file", subagent_type: "general" } },
        ],
      ],
      ["SCRIPT:sub", [patch(`*** Add File: ${p}/sub/agent.txt`, "+from the sub-agent")]],
    ];
  },
};

// A sub-agent's (task) edits are not in the parent's stream: the file watcher covers them.
conformance(opencode, {
  streamSyncs: ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt"],
  diskChanges: ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt", "shell.txt", "sub/agent.txt"],
});
