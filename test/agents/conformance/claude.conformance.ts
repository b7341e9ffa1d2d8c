import { writeFileSync } from "node:fs";
import path from "node:path";
import { BIN, conformance, type AgentCase } from "./harness.js";

/**
 * Claude Code 2.1: ANTHROPIC_BASE_URL points it at the fake model; IS_SANDBOX lets root bypass
 * permissions; the DISABLE_* switches keep it off the network otherwise. It has no MultiEdit
 * tool any more (two Edits instead), and no rename or delete tool (a shell does those).
 */
const claude: AgentCase = {
  agent: "claude",
  command: (prompt) => [
    path.join(BIN, "..", "@anthropic-ai", "claude-code-linux-x64", "claude"),
    ["-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5"],
  ],
  setup: (home, _project, modelUrl) => {
    writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ hasCompletedOnboarding: true }));
    return {
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: "sk-ant-dummy",
      IS_SANDBOX: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
  },
  scripts: (p) => [
    [
      "SCRIPT:main",
      [
        { tool: "Write", input: { file_path: `${p}/new.txt`, content: "new\n" } },
        { tool: "Read", input: { file_path: `${p}/edit.txt` } },
        { tool: "Edit", input: { file_path: `${p}/edit.txt`, old_string: "alpha", new_string: "ALPHA" } },
        { tool: "Read", input: { file_path: `${p}/multi.txt` } },
        { tool: "Edit", input: { file_path: `${p}/multi.txt`, old_string: "one", new_string: "ONE" } },
        { tool: "Edit", input: { file_path: `${p}/multi.txt`, old_string: "three", new_string: "THREE" } },
        { tool: "Edit", input: { file_path: `${p}/p1.txt`, old_string: "not there", new_string: "x" } },
        { tool: "Bash", input: { command: "echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt", description: "shell edits" } },
        { tool: "Agent", input: { description: "write a file", prompt: "SCRIPT:sub: write the file", subagent_type: "general-purpose" } },
      ],
    ],
    ["SCRIPT:sub", [{ tool: "Write", input: { file_path: `${p}/sub/agent.txt`, content: "from the sub-agent\n" } }]],
  ],
};

conformance(claude, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt", "sub/agent.txt"],
  diskChanges: ["doomed.txt", "edit.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "shell.txt", "sub/agent.txt"],
});
