import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BIN, conformance, EDITED, edits, type AgentCase } from "./harness.js";

/**
 * Qwen Code: its OpenAI-compatible auth (`OPENAI_BASE_URL` on loopback, a dummy key), usage
 * statistics and updates off in `~/.qwen/settings.json`. Watched with `--agent auto`: its
 * Claude-shaped stream must be told from Claude's.
 */
const qwen: AgentCase = {
  agent: "qwen",
  watchAs: "auto",
  command: (prompt) => [process.execPath, [path.join(BIN, "qwen"), "-p", prompt, "--output-format", "stream-json", "--yolo"]],
  setup: (home, modelUrl) => {
    mkdirSync(path.join(home, ".qwen"));
    const settings = {
      security: { auth: { selectedType: "openai" } },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true },
      telemetry: { enabled: false },
    };
    writeFileSync(path.join(home, ".qwen", "settings.json"), JSON.stringify(settings));
    return {
      OPENAI_API_KEY: "dummy",
      OPENAI_BASE_URL: `${modelUrl}/v1`,
      OPENAI_MODEL: "qwen3-coder-plus",
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    };
  },
  scripts: (p) =>
    edits(p, {
      write: "write_file",
      read: "read_file",
      edit: ["edit"],
      shell: ["run_shell_command", { is_background: false }],
      agent: ["agent", "general-purpose"],
    }),
};

conformance(qwen, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt"],
  diskChanges: [...EDITED, "sub/agent.txt"],
});
