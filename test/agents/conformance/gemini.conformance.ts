import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BIN, conformance, EDITED, edits, type AgentCase } from "./harness.js";

/**
 * Gemini CLI: `GOOGLE_GEMINI_BASE_URL` on loopback with a dummy `GEMINI_API_KEY`, the folder
 * trusted by `GEMINI_CLI_TRUST_WORKSPACE`, usage statistics, telemetry and updates off.
 */
const gemini: AgentCase = {
  agent: "gemini",
  command: (prompt) => [
    process.execPath,
    [path.join(BIN, "gemini"), "-p", prompt, "--output-format", "stream-json", "--yolo", "-m", "gemini-2.5-pro"],
  ],
  setup: (home, modelUrl) => {
    mkdirSync(path.join(home, ".gemini"));
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      privacy: { usageStatisticsEnabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      telemetry: { enabled: false },
    };
    writeFileSync(path.join(home, ".gemini", "settings.json"), JSON.stringify(settings));
    return { GEMINI_API_KEY: "dummy", GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_CLI_TRUST_WORKSPACE: "true" };
  },
  // No read before an edit, no sub-agent; one write by a relative path.
  scripts: (p) =>
    edits(
      p,
      {
        write: "write_file",
        edit: ["replace", { instruction: "replace old_string with new_string" }],
        shell: ["run_shell_command", { description: "shell edits" }],
      },
      [{ tool: "write_file", input: { file_path: "relative.txt", content: "a relative path\n" } }],
    ),
};

conformance(gemini, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt", "relative.txt"],
  diskChanges: [...EDITED, "relative.txt"],
});
