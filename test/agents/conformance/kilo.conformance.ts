import path from "node:path";
import { BIN, conformance, parallelPatches, patchText, type AgentCase } from "./harness.js";

/**
 * Kilo Code CLI: OpenCode's fork, with OpenCode's `run --format json` stream and its settings
 * under KILO_* names: the `openai` provider on loopback through `KILO_CONFIG_CONTENT`, every
 * permission granted, updates, sharing, telemetry, LSP downloads and default plugins off.
 * Watched with `--agent auto`: its stream is detected as OpenCode's.
 */
const kilo: AgentCase = {
  agent: "kilo",
  watchAs: "auto",
  command: (prompt) => [path.join(BIN, "kilo"), ["run", "--format", "json", prompt]],
  setup: (home, modelUrl) => {
    const config = {
      autoupdate: false,
      share: "disabled",
      model: "openai/gpt-5.3-codex",
      small_model: "openai/gpt-5.3-codex",
      provider: { openai: { options: { baseURL: `${modelUrl}/v1`, apiKey: "dummy" } } },
      permission: { edit: "allow", bash: "allow", external_directory: "allow" },
    };
    const off = [
      "AUTOUPDATE",
      "SHARE",
      "LSP_DOWNLOAD",
      "DEFAULT_PLUGINS",
      "MODELS_FETCH",
      "SESSION_INGEST",
      "CODEBASE_INDEXING",
      "PRESENCE",
      "CLAUDE_CODE",
      "EXTERNAL_SKILLS",
    ];
    return {
      KILO_CONFIG_CONTENT: JSON.stringify(config),
      ...Object.fromEntries(off.map((what) => [`KILO_DISABLE_${what}`, "1"])),
      KILO_TELEMETRY_LEVEL: "off",
      XDG_CONFIG_HOME: path.join(home, ".config"),
      XDG_DATA_HOME: path.join(home, ".local", "share"),
    };
  },
  scripts: (p) => [
    [
      "SCRIPT:main",
      [
        ...parallelPatches(p, (lines) => ({ tool: "apply_patch", input: { patchText: patchText(lines) } })),
        { tool: "bash", input: { command: "echo shell > shell.txt", description: "write a file from the shell" } },
      ],
    ],
  ],
};

const PATCHED = ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt"];
conformance(kilo, { streamSyncs: PATCHED, diskChanges: [...PATCHED, "shell.txt"] });
