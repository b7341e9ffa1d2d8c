import path from "node:path";
import { BIN, conformance, patches, patchText, type AgentCase } from "./harness.js";

/**
 * OpenCode: its `openai` provider pointed at loopback through `OPENCODE_CONFIG_CONTENT` (a GPT
 * model, so it offers `apply_patch`), every permission granted, models fetch, updates, sharing,
 * LSP downloads and default plugins off.
 */
const opencode: AgentCase = {
  agent: "opencode",
  command: (prompt) => [path.join(BIN, "opencode"), ["run", "--format", "json", "--print-logs", "--log-level", "WARN", prompt]],
  setup: (home, modelUrl) => {
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
  scripts: (p) => [
    [
      "SCRIPT:main",
      [
        ...patches(p).map((lines) => ({ tool: "apply_patch", input: { patchText: patchText(lines) } })),
        { tool: "bash", input: { command: "echo shell > shell.txt", description: "write a file from the shell" } },
        { tool: "task", input: { description: "write a file", prompt: "SCRIPT:sub: write the file", subagent_type: "general" } },
      ],
    ],
    ["SCRIPT:sub", [{ tool: "apply_patch", input: { patchText: patchText([`*** Add File: ${p}/sub/agent.txt`, "+from the sub-agent"]) } }]],
  ],
};

// A sub-agent's (task) edits are not in the parent's stream: the file watcher covers them.
conformance(opencode, {
  streamSyncs: ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt"],
  diskChanges: [
    "doomed.txt",
    "edit.txt",
    "half1.txt",
    "multi.txt",
    "new-name.txt",
    "new.txt",
    "old-name.txt",
    "p1.txt",
    "p2.txt",
    "shell.txt",
    "sub/agent.txt",
  ],
});
