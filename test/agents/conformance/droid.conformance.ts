import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { conformance, EDITED, edits, PARALLEL_EDITED, parallelPatches, patchText, type AgentCase } from "./harness.js";

/**
 * Factory Droid: a custom model in `~/.factory/settings.json` (its BYOK settings) on loopback,
 * `--auto high` so that it edits and runs commands unasked. Its tools depend on the provider:
 * Create / Edit with an Anthropic one, a freeform ApplyPatch with an OpenAI (responses) one;
 * one run each. Its Task tool needs Factory's daemon, so no sub-agent here. Watched with
 * `--agent auto`: its init looks like Claude Code's, and must not be taken for it.
 */
function droidCase(variant: string, provider: string, model: string, scripts: AgentCase["scripts"]): AgentCase {
  return {
    agent: "droid",
    variant,
    watchAs: "auto",
    command: (prompt) => [droidBinary(), ["exec", "-o", "stream-json", "--auto", "high", "-m", "custom:Mock-0", prompt]],
    setup: (home, modelUrl) => {
      mkdirSync(path.join(home, ".factory"));
      const custom = { model, displayName: "Mock", baseUrl: modelUrl, apiKey: "dummy", provider, maxOutputTokens: 8192 };
      writeFileSync(path.join(home, ".factory", "settings.json"), JSON.stringify({ customModels: [custom] }));
      return { FACTORY_API_KEY: "dummy" };
    },
    scripts,
  };
}

const shellFields = { summary: "Run the shell edits now", riskLevel: "low", riskLevelReason: "It edits test files only." };

const editTools = droidCase("Create-Edit", "anthropic", "claude-sonnet-4-5", (p) =>
  edits(p, { write: "Create", edit: ["Edit"], shell: ["Execute", shellFields], keys: { old: "old_str", new: "new_str" }, parallel: true }),
);

const applyPatch = droidCase("ApplyPatch", "openai", "gpt-5.3-codex", (p) => [
  [
    "SCRIPT:main",
    [
      ...parallelPatches(p, (lines) => ({ tool: "ApplyPatch", input: {}, freeform: patchText(lines) + "\n" })),
      { tool: "Execute", input: { command: "echo shell > shell.txt", ...shellFields } },
    ],
  ],
]);

/**
 * The binary of the platform package (Droid's wrapper @factory/cli is not in the registry at a
 * version whose platform packages are), as the wrapper would run it.
 */
function droidBinary(): string {
  const name = `@factory/cli-${process.platform}-${process.arch}`;
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`)), "bin", "droid");
  } catch {
    throw new Error(`${name} is not installed: test/agents pins Droid's linux-x64 binary only`);
  }
}

conformance(editTools, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt", ...PARALLEL_EDITED],
  diskChanges: [...EDITED, ...PARALLEL_EDITED],
});

// A patch that fails halfway says nothing of what it wrote: its files are reported unconfirmed, and half1.txt syncs.
const PATCHED = ["doomed.txt", "edit.txt", "half1.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "p1.txt", "p2.txt"];
conformance(applyPatch, { streamSyncs: PATCHED, diskChanges: [...PATCHED, "shell.txt"] });
