import path from "node:path";
import { BIN, conformance, EDITED, edits, PARALLEL_EDITED, parallelPatches, patchText, type AgentCase } from "./harness.js";

/**
 * GitHub Copilot CLI: a provider of our own (`COPILOT_PROVIDER_BASE_URL`, as `copilot help
 * environment` lists), offline mode (no GitHub login, telemetry or update), every tool allowed.
 * Its tools depend on the model: `create` / `edit` for GPT-4.1 (chat completions), a freeform
 * `apply_patch` for the GPT-5 models (responses); one run each.
 */
function copilotCase(variant: string, model: string, wireApi: string, scripts: AgentCase["scripts"]): AgentCase {
  return {
    agent: "copilot",
    variant,
    watchAs: "auto",
    command: (prompt) => [path.join(BIN, "copilot"), ["-p", prompt, "--allow-all-tools", "--output-format", "json", "--no-auto-update"]],
    setup: (home, modelUrl) => ({
      COPILOT_HOME: path.join(home, ".copilot"),
      COPILOT_PROVIDER_BASE_URL: `${modelUrl}/v1`,
      COPILOT_OFFLINE: "true",
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_MODEL: model,
      COPILOT_PROVIDER_API_KEY: "dummy",
      COPILOT_PROVIDER_WIRE_API: wireApi,
    }),
    scripts,
  };
}

const editTools = copilotCase("create-edit", "gpt-4.1", "completions", (p) =>
  edits(p, {
    write: "create",
    edit: ["edit"],
    shell: ["bash", { description: "shell edits" }],
    agent: ["task", "general-purpose", { name: "writer" }],
    keys: { path: "path", content: "file_text", old: "old_str", new: "new_str", subagentType: "agent_type" },
    parallel: true,
  }),
);

const applyPatch = copilotCase("apply_patch", "gpt-5.3-codex", "responses", (p) => [
  ["SCRIPT:main", parallelPatches(p, (lines) => ({ tool: "apply_patch", input: {}, freeform: patchText(lines) + "\n" }))],
]);

// The sub-agent's calls are in the parent's stream. The shell's edits are left to the file watcher.
conformance(editTools, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt", ...PARALLEL_EDITED, "sub/agent.txt"],
  diskChanges: [...EDITED, ...PARALLEL_EDITED, "sub/agent.txt"],
});

// A patch that fails halfway lists the file it wrote (half1.txt); a rename is a create and a delete.
const PATCHED = ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt"];
conformance(applyPatch, { streamSyncs: PATCHED, diskChanges: PATCHED });
