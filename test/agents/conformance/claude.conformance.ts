import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { conformance, EDITED, edits, type AgentCase } from "./harness.js";

/**
 * Claude Code 2.1: ANTHROPIC_BASE_URL points it at the fake model; IS_SANDBOX lets root bypass
 * permissions; the DISABLE_* switches keep it off the network otherwise. It has no MultiEdit
 * tool any more (two Edits instead), and no rename or delete tool (a shell does those).
 */
const claude: AgentCase = {
  agent: "claude",
  command: (prompt) => [
    nativeBinary(),
    ["-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5"],
  ],
  setup: (home, modelUrl) => {
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
  scripts: (p) =>
    edits(p, {
      write: "Write",
      read: "Read",
      edit: ["Edit"],
      shell: ["Bash", { description: "shell edits" }],
      agent: ["Agent", "general-purpose"],
    }),
};

/**
 * The native binary, from the one platform package of the wrapper's optionalDependencies that npm
 * installed for this machine (it picks by os, cpu and libc), as the wrapper's own launcher
 * (cli-wrapper.cjs) finds it. Not `.bin/claude`: installed with --ignore-scripts, that is the
 * wrapper's stub, which its postinstall would replace with this binary.
 */
function nativeBinary(): string {
  const wrapper = createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json");
  const fromWrapper = createRequire(wrapper);
  const platforms = Object.keys((fromWrapper(wrapper) as { optionalDependencies: Record<string, string> }).optionalDependencies);
  const installed = platforms.flatMap((name) => {
    try {
      return [path.dirname(fromWrapper.resolve(`${name}/package.json`))];
    } catch {
      return [];
    }
  });
  if (installed.length !== 1) throw new Error(`expected one of ${platforms.join(", ")} installed, found ${installed.length}`);
  return path.join(installed[0]!, process.platform === "win32" ? "claude.exe" : "claude");
}

conformance(claude, {
  streamSyncs: ["edit.txt", "multi.txt", "new.txt", "sub/agent.txt"],
  diskChanges: [...EDITED, "sub/agent.txt"],
});
