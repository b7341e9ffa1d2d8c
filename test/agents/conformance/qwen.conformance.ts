import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BIN, conformance, type AgentCase } from "./harness.js";

/**
 * Qwen Code: its OpenAI-compatible auth (`OPENAI_BASE_URL` on loopback, a dummy key), usage
 * statistics and updates off in `~/.qwen/settings.json`. Watched with `--agent auto`: its
 * Claude-shaped stream must be told from Claude's.
 */
const qwen: AgentCase = {
  agent: "qwen",
  watchAs: "auto",
  command: (prompt) => [process.execPath, [path.join(BIN, "qwen"), "-p", prompt, "--output-format", "stream-json", "--yolo"]],
  setup: (home, _project, modelUrl) => {
    mkdirSync(path.join(home, ".qwen"));
    const settings = {
      security: { auth: { selectedType: "openai" } },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true },
      telemetry: { enabled: false },
    };
    writeFileSync(path.join(home, ".qwen", "settings.json"), JSON.stringify(settings));
    return { OPENAI_API_KEY: "dummy", OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_MODEL: "qwen3-coder-plus", QWEN_CODE_SUPPRESS_YOLO_WARNING: "1" };
  },
  scripts: (p) => [
    [
      "SCRIPT:main",
      [
        { tool: "write_file", input: { file_path: `${p}/new.txt`, content: "new\n" } },
        { tool: "read_file", input: { file_path: `${p}/edit.txt` } },
        { tool: "edit", input: { file_path: `${p}/edit.txt`, old_string: "alpha", new_string: "ALPHA" } },
        { tool: "read_file", input: { file_path: `${p}/multi.txt` } },
        { tool: "edit", input: { file_path: `${p}/multi.txt`, old_string: "one", new_string: "ONE" } },
        { tool: "edit", input: { file_path: `${p}/multi.txt`, old_string: "three", new_string: "THREE" } },
        { tool: "edit", input: { file_path: `${p}/p1.txt`, old_string: "not there", new_string: "x" } },
        { tool: "run_shell_command", input: { command: "echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt", is_background: false } },
        { tool: "agent", input: { description: "write a file", prompt: "SCRIPT:sub: write the file", subagent_type: "general-purpose" } },
      ],
    ],
    ["SCRIPT:sub", [{ tool: "write_file", input: { file_path: `${p}/sub/agent.txt`, content: "from the sub-agent\n" } }]],
  ],
};

conformance(qwen, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt"],
  diskChanges: ["doomed.txt", "edit.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "shell.txt", "sub/agent.txt"],
});
