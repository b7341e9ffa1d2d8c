import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BIN, conformance, type AgentCase } from "./harness.js";

/**
 * Gemini CLI: `GOOGLE_GEMINI_BASE_URL` on loopback with a dummy `GEMINI_API_KEY`, the folder
 * trusted by `GEMINI_CLI_TRUST_WORKSPACE`, usage statistics, telemetry and updates off.
 */
const gemini: AgentCase = {
  agent: "gemini",
  command: (prompt) => [process.execPath, [path.join(BIN, "gemini"), "-p", prompt, "--output-format", "stream-json", "--yolo", "-m", "gemini-2.5-pro"]],
  setup: (home, _project, modelUrl) => {
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
  scripts: (p) => [
    [
      "SCRIPT:main",
      [
        { tool: "write_file", input: { file_path: `${p}/new.txt`, content: "new\n" } },
        { tool: "replace", input: { file_path: `${p}/edit.txt`, old_string: "alpha", new_string: "ALPHA", instruction: "upper-case it" } },
        { tool: "replace", input: { file_path: `${p}/multi.txt`, old_string: "one", new_string: "ONE", instruction: "upper-case it" } },
        { tool: "replace", input: { file_path: `${p}/multi.txt`, old_string: "three", new_string: "THREE", instruction: "upper-case it" } },
        { tool: "replace", input: { file_path: `${p}/p1.txt`, old_string: "not there", new_string: "x", instruction: "fails" } },
        { tool: "write_file", input: { file_path: "relative.txt", content: "a relative path\n" } },
        { tool: "run_shell_command", input: { command: "echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt", description: "shell edits" } },
      ],
    ],
  ],
};

conformance(gemini, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt", "relative.txt"],
  diskChanges: ["doomed.txt", "edit.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "relative.txt", "shell.txt"],
});
