import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BIN, conformance, patches, patchText, type AgentCase } from "./harness.js";

/**
 * Codex: a model provider of our own in `$CODEX_HOME/config.toml` (base_url on loopback, no
 * key), a model slug Codex knows (so it offers its freeform apply_patch tool), no update check.
 */
const codex: AgentCase = {
  agent: "codex",
  command: (prompt) => [
    path.join(BIN, "codex"),
    ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt],
  ],
  setup: (home, modelUrl) => {
    mkdirSync(path.join(home, ".codex"));
    const config = [
      'model = "gpt-5.5"',
      'model_provider = "mock"',
      "check_for_update_on_startup = false",
      "[analytics]",
      "enabled = false",
      "[model_providers.mock]",
      'name = "mock"',
      `base_url = "${modelUrl}/v1"`,
      'wire_api = "responses"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
    ];
    writeFileSync(path.join(home, ".codex", "config.toml"), config.join("\n") + "\n");
    return { CODEX_HOME: path.join(home, ".codex") };
  },
  scripts: (p) => [
    [
      "SCRIPT:main",
      [
        // Codex checks every hunk before it writes: a hunk that does not apply fails the patch whole.
        ...patches(p).map((lines) => ({ tool: "apply_patch", input: {}, freeform: patchText(lines) + "\n" })),
        { tool: "exec_command", input: { cmd: "echo shell > shell.txt" } },
      ],
    ],
  ],
};

// The stream says where a renamed file went nowhere (an `update` of the old path): the old path
// is deleted, the new one is left to the file watcher. The half-failed patch's written file syncs.
conformance(codex, {
  streamSyncs: ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt"],
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
  ],
});
