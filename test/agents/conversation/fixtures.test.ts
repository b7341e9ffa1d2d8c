import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createConversationReader } from "../../../src/agents/conversation/index.js";
import { FIXTURES } from "../../kit/agent-fixtures.js";
import { digest, read } from "./helpers.js";

/**
 * Each fixture stream (fixtures/<agent>/, those of copilot, droid and kilo recorded from real runs)
 * read as a conversation: its prompt where the stream carries it, the agent's words, each tool call
 * as it stands last, and how the run ended.
 */
const FIXTURES_EXPECTED: Record<string, { format: string; steps: string[] }> = {
  claude: {
    format: "claude",
    steps: [
      "text: I'll look at the project first.",
      "tool Read ok: /workspace/project/src/app.ts",
      "tool Bash ok: ls src",
      "tool Edit ok: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "tool Write ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool MultiEdit ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool NotebookEdit ok: /workspace/project/notebooks/analysis.ipynb [/workspace/project/notebooks/analysis.ipynb]",
      "tool Edit failed: /workspace/project/src/missing.ts [/workspace/project/src/missing.ts] (File does not exist.)",
      "tool Write failed: /workspace/project/.env [/workspace/project/.env] (Claude requested permissions to write to /workspace/project/.env, but you haven't granted it yet.)",
      "tool Task ok: Update the docs",
      "tool Edit ok: /workspace/project/README.md [/workspace/project/README.md]",
      "tool Write ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool Write ok: docs/notes.md [docs/notes.md]",
      "tool Edit running: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "result failed: error_during_execution",
    ],
  },
  codex: {
    format: "codex",
    steps: [
      "tool command_execution ok: bash -lc ls",
      "tool file_change ok: /workspace/project/src/app.ts, /workspace/project/src/new.ts [/workspace/project/src/app.ts, /workspace/project/src/new.ts]",
      "tool file_change failed: /workspace/project/src/broken.ts [/workspace/project/src/broken.ts] (failed)",
      "tool file_change ok: /workspace/project/old.txt [/workspace/project/old.txt]",
      "tool file_change ok: /workspace/project/docs/guide.md [/workspace/project/docs/guide.md]",
      "tool file_change ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "text: Updated the app; one more change to go.",
      "tool file_change running: /workspace/project/src/later.ts [/workspace/project/src/later.ts]",
    ],
  },
  gemini: {
    format: "gemini",
    steps: [
      "prompt: Fix the greeting in src/app.ts and write some notes",
      "tool read_file ok: /workspace/project/src/app.ts",
      "text: I'll fix the typo.",
      "tool replace ok: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "tool replace failed: /workspace/project/src/missing.ts [/workspace/project/src/missing.ts] (File not found: /workspace/project/src/missing.ts)",
      "tool write_file ok: docs/notes.md [docs/notes.md]",
      "tool write_file ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool write_file running: /workspace/project/src/late.ts [/workspace/project/src/late.ts]",
    ],
  },
  opencode: {
    format: "opencode",
    steps: [
      "tool read ok: /workspace/project/src/app.ts",
      "tool edit ok: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "tool edit failed: /workspace/project/src/missing.ts [/workspace/project/src/missing.ts] (Error: File /workspace/project/src/missing.ts not found)",
      "tool write ok: /workspace/project/docs/notes.md [/workspace/project/docs/notes.md]",
      "tool apply_patch ok: /workspace/project/src/old-name.ts, /workspace/project/src/new-name.ts, /workspace/project/src/obsolete.ts, /workspace/project/src/added.ts [/workspace/project/src/old-name.ts, /workspace/project/src/new-name.ts, /workspace/project/src/obsolete.ts, /workspace/project/src/added.ts]",
      "tool write ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "text: Renamed the module and fixed the greeting.",
      "result ok: Renamed the module and fixed the greeting.",
    ],
  },
  kilo: {
    format: "opencode",
    steps: [
      "tool apply_patch ok: /workspace/project/new.txt [/workspace/project/new.txt]",
      "tool apply_patch ok: /workspace/project/sub/par.txt [/workspace/project/sub/par.txt]",
      "tool apply_patch ok: /workspace/project/p1.txt [/workspace/project/p1.txt]",
      "tool apply_patch failed: /workspace/project/half2.txt [/workspace/project/half2.txt] (apply_patch verification failed: Error: Failed to find expected lines in /workspace/project/half2.txt:\nno such line)",
      "tool apply_patch failed: /workspace/project/half1.txt, /workspace/project/sub/keep.txt/inner.txt [/workspace/project/half1.txt, /workspace/project/sub/keep.txt/inner.txt] (BadResource: FileSystem.writeFile (/workspace/project/sub/keep.txt/inner.txt))",
      "tool apply_patch ok: /workspace/project/old-name.txt, /workspace/project/new-name.txt [/workspace/project/old-name.txt, /workspace/project/new-name.txt]",
      "tool apply_patch ok: /workspace/project/doomed.txt [/workspace/project/doomed.txt]",
      "tool apply_patch ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "result ok: ",
    ],
  },
  cursor: {
    format: "cursor",
    steps: [
      "prompt: Summarize the README into src/summary.txt, bump the app version, remove old.txt",
      "text: I'll read the README first.",
      "tool read ok: README.md",
      "tool write ok: src/summary.txt [src/summary.txt]",
      "tool edit ok: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "tool edit failed: src/missing.ts [src/missing.ts] (File not found: /workspace/project/src/missing.ts)",
      "tool delete ok: /workspace/project/old.txt [/workspace/project/old.txt]",
      "tool write ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool edit running: src/late.ts [src/late.ts]",
    ],
  },
  qwen: {
    format: "qwen",
    steps: [
      "text: I'll create the helper first.",
      "tool write_file ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool edit failed: /workspace/project/src/app.ts [/workspace/project/src/app.ts] (Failed to edit, 0 occurrences found for old_string in /workspace/project/src/app.ts. No edits made. The exact text in old_string was not found.)",
      "tool replace ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool write_file ok: docs/notes.md [docs/notes.md]",
      "tool edit running: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "result failed: Request was aborted.",
    ],
  },
  amp: {
    format: "amp",
    steps: [
      "prompt: Add a util module and fix the greeting",
      "tool create_file ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool edit_file failed: /workspace/project/src/app.ts [/workspace/project/src/app.ts] (Could not find exact match for old_str)",
      "tool edit_file ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool create_file ok: docs/notes.md [docs/notes.md]",
      "tool edit_file running: /workspace/project/src/app.ts [/workspace/project/src/app.ts]",
      "result failed: Interrupted",
    ],
  },
  acai: {
    format: "acai",
    steps: [
      "prompt: Add a util module, rename old-name.ts and clean up",
      "tool readFile ok: src/app.ts",
      "tool saveFile ok: src/util.ts [src/util.ts]",
      "tool editFile failed: src/missing.ts [src/missing.ts] (Failed to edit file: File not found: /workspace/project/src/missing.ts)",
      "tool moveFile ok: src/old-name.ts [src/old-name.ts, src/new-name.ts]",
      "tool deleteFile ok: /workspace/project/obsolete.txt [/workspace/project/obsolete.txt]",
      "tool saveFile ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "text: One last edit to app.ts.",
      "tool editFile running: src/app.ts [src/app.ts]",
    ],
  },
  kimi: {
    format: "kimi",
    steps: [
      "text: Let me look at the app.",
      "tool ReadFile ok: src/app.ts",
      "text: Now the helper module.",
      "tool WriteFile ok: /workspace/project/src/util.ts [/workspace/project/src/util.ts]",
      "tool StrReplaceFile failed: src/app.ts [src/app.ts] (ERROR: No replacements were made. The old string was not found in the file.)",
      "tool StrReplaceFile ok: src/app.ts [src/app.ts]",
      "tool WriteFile ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "text: Last, a stub.",
      "tool WriteFile running: src/late.ts [src/late.ts]",
    ],
  },
  copilot: {
    format: "copilot",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool apply_patch ok: /workspace/project/new.txt [/workspace/project/new.txt]",
      "tool apply_patch ok: /workspace/project/edit.txt [/workspace/project/edit.txt]",
      "tool apply_patch ok: /workspace/project/p1.txt [/workspace/project/p1.txt]",
      "tool apply_patch ok: /workspace/project/sub/par.txt [/workspace/project/sub/par.txt]",
      "tool apply_patch failed: /workspace/project/half2.txt [/workspace/project/half2.txt] (Failed to apply patch: Error: Failed to find expected lines in /workspace/project/half2.txt:\nno such line)",
      "tool apply_patch failed: /workspace/project/half1.txt, /workspace/project/sub/keep.txt/inner.txt [/workspace/project/half1.txt] (Error: ENOTDIR: not a directory, open '/workspace/project/sub/keep.txt/inner.txt')",
      "tool apply_patch ok: /workspace/project/old-name.txt, /workspace/project/new-name.txt [/workspace/project/new-name.txt, /workspace/project/old-name.txt]",
      "tool apply_patch ok: /workspace/project/doomed.txt [/workspace/project/doomed.txt]",
      "tool apply_patch ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool apply_patch running: /workspace/project/late.txt [/workspace/project/late.txt]",
    ],
  },
  "copilot:edit-tools": {
    format: "copilot",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool create ok: /workspace/project/new.txt [/workspace/project/new.txt]",
      "tool edit ok: /workspace/project/edit.txt [/workspace/project/edit.txt]",
      "tool edit failed: /workspace/project/p1.txt [/workspace/project/p1.txt] (No match found)",
      "tool edit ok: /workspace/project/multi.txt [/workspace/project/multi.txt]",
      "tool create ok: /workspace/project/sub/par.txt [/workspace/project/sub/par.txt]",
      "tool bash ok: rm doomed.txt",
      "tool task ok: write a file",
      "tool create ok: /workspace/project/sub/agent.txt [/workspace/project/sub/agent.txt]",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  droid: {
    format: "droid",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool ApplyPatch ok: /workspace/project/new.txt [/workspace/project/new.txt]",
      "tool ApplyPatch ok: /workspace/project/edit.txt [/workspace/project/edit.txt]",
      "tool ApplyPatch ok: /workspace/project/p1.txt [/workspace/project/p1.txt]",
      "tool ApplyPatch ok: /workspace/project/sub/par.txt [/workspace/project/sub/par.txt]",
      "tool ApplyPatch failed: /workspace/project/half2.txt [/workspace/project/half2.txt] (Error: Failed to apply patch: PatchApplicationError: Invalid context)",
      "tool ApplyPatch failed: /workspace/project/half1.txt, /workspace/project/sub/keep.txt/inner.txt [/workspace/project/half1.txt, /workspace/project/sub/keep.txt/inner.txt] (Error: ENOTDIR: not a directory, statx '/workspace/project/sub/keep.txt/inner.txt')",
      "tool ApplyPatch ok: /workspace/project/old-name.txt, /workspace/project/new-name.txt [/workspace/project/old-name.txt, /workspace/project/new-name.txt]",
      "tool ApplyPatch ok: /workspace/project/doomed.txt [/workspace/project/doomed.txt]",
      "tool ApplyPatch ok: /workspace/project-evil/x.txt [/workspace/project-evil/x.txt]",
      "tool ApplyPatch running: /workspace/project/late.txt [/workspace/project/late.txt]",
    ],
  },
  "droid:edit-tools": {
    format: "droid",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool Create ok: /workspace/project/new.txt [/workspace/project/new.txt]",
      "tool Edit ok: /workspace/project/edit.txt [/workspace/project/edit.txt]",
      "tool Edit failed: /workspace/project/p1.txt [/workspace/project/p1.txt] (Error: Error: The text to replace was not found in the file. Please ensure the old_str parameter matches the exact text in the file, including whitespace and line breaks.)",
      "tool Edit ok: /workspace/project/multi.txt [/workspace/project/multi.txt]",
      "tool Create ok: /workspace/project/sub/par.txt [/workspace/project/sub/par.txt]",
      "tool Create ok: rel.txt [rel.txt]",
      "tool Execute ok: rm doomed.txt",
      "text: All done.",
      "result ok: All done.",
    ],
  },
};

/**
 * The real agents' stdout as the conformance suite recorded it (test/agents/conformance/recorded/,
 * USPARK_AGENT_DUMP; its temp directory written as /workspace): the same, for each agent it runs.
 */
const RECORDED_EXPECTED: Record<string, { format: string; steps: string[] }> = {
  claude: {
    format: "claude",
    steps: [
      "tool Write ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool Read ok: /workspace/proj/edit.txt",
      "tool Edit ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool Read ok: /workspace/proj/multi.txt",
      "tool Edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool Edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool Edit failed: /workspace/proj/p1.txt [/workspace/proj/p1.txt] (File has not been read yet. Read it first before writing to it.)",
      "tool Bash ok: echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt",
      "tool Agent ok: write a file",
      "text: All done.",
      "tool Write ok: /workspace/proj/sub/agent.txt [/workspace/proj/sub/agent.txt]",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  codex: {
    format: "codex",
    steps: [
      "tool file_change ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool file_change ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool file_change ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool file_change ok: /workspace/proj/p1.txt, /workspace/proj/p2.txt [/workspace/proj/p1.txt, /workspace/proj/p2.txt]",
      "tool file_change failed: /workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt [/workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt] (failed)",
      "tool file_change ok: /workspace/proj/old-name.txt [/workspace/proj/old-name.txt]",
      "tool file_change ok: /workspace/proj/doomed.txt [/workspace/proj/doomed.txt]",
      "tool command_execution ok: /bin/bash -lc 'echo shell > shell.txt'",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  "copilot-apply_patch": {
    format: "copilot",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool apply_patch ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool apply_patch ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool apply_patch ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool apply_patch ok: /workspace/proj/p1.txt, /workspace/proj/p2.txt [/workspace/proj/p1.txt, /workspace/proj/p2.txt]",
      "tool apply_patch failed: /workspace/proj/half2.txt [/workspace/proj/half2.txt] (Failed to apply patch: Error: Failed to find expected lines in /workspace/proj/half2.txt:\nno such line)",
      "tool apply_patch failed: /workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt [/workspace/proj/half1.txt] (Error: ENOTDIR: not a directory, open '/workspace/proj/sub/keep.txt/inner.txt')",
      "tool apply_patch ok: /workspace/proj/old-name.txt, /workspace/proj/new-name.txt [/workspace/proj/new-name.txt, /workspace/proj/old-name.txt]",
      "tool apply_patch ok: /workspace/proj/doomed.txt [/workspace/proj/doomed.txt]",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  "copilot-create-edit": {
    format: "copilot",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool create ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool edit ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool edit failed: /workspace/proj/p1.txt [/workspace/proj/p1.txt] (No match found)",
      "tool edit ok: /workspace/proj/p2.txt [/workspace/proj/p2.txt]",
      "tool create ok: /workspace/proj/sub/par.txt [/workspace/proj/sub/par.txt]",
      "tool bash ok: echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt",
      "tool task ok: write a file",
      "tool create ok: /workspace/proj/sub/agent.txt [/workspace/proj/sub/agent.txt]",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  "droid-ApplyPatch": {
    format: "droid",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool ApplyPatch ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool ApplyPatch ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool ApplyPatch ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool ApplyPatch ok: /workspace/proj/p1.txt, /workspace/proj/p2.txt [/workspace/proj/p1.txt, /workspace/proj/p2.txt]",
      "tool ApplyPatch failed: /workspace/proj/half2.txt [/workspace/proj/half2.txt] (Error: Failed to apply patch: PatchApplicationError: Invalid context)",
      "tool ApplyPatch failed: /workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt [/workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt] (Error: ENOTDIR: not a directory, statx '/workspace/proj/sub/keep.txt/inner.txt')",
      "tool ApplyPatch ok: /workspace/proj/old-name.txt, /workspace/proj/new-name.txt [/workspace/proj/old-name.txt, /workspace/proj/new-name.txt]",
      "tool ApplyPatch ok: /workspace/proj/doomed.txt [/workspace/proj/doomed.txt]",
      "tool Execute ok: echo shell > shell.txt",
      "result ok: ",
    ],
  },
  "droid-Create-Edit": {
    format: "droid",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool Create ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool Edit ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool Edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool Edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool Edit failed: /workspace/proj/p1.txt [/workspace/proj/p1.txt] (Error: Error: The text to replace was not found in the file. Please ensure the old_str parameter matches the exact text in the file, including whitespace and line breaks.)",
      "tool Edit ok: /workspace/proj/p2.txt [/workspace/proj/p2.txt]",
      "tool Create ok: /workspace/proj/sub/par.txt [/workspace/proj/sub/par.txt]",
      "tool Execute ok: echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  gemini: {
    format: "gemini",
    steps: [
      "prompt: SCRIPT:main: follow the script.",
      "tool write_file ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool replace ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool replace ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool replace ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool replace failed: /workspace/proj/p1.txt [/workspace/proj/p1.txt] (Could not find an exact match for 'old_string' in '/workspace/proj/p1.txt'. If previous edits modified the file or you are modifying lines outside your recent read window, please use ReadFile to inspect the target lines before retrying with an exact 'old_string'.)",
      "tool write_file ok: relative.txt [relative.txt]",
      "tool run_shell_command ok: echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt",
      "text: All done.",
      "result ok: All done.",
    ],
  },
  kilo: {
    format: "opencode",
    steps: [
      "tool apply_patch ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool apply_patch ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool apply_patch ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool apply_patch ok: /workspace/proj/p1.txt, /workspace/proj/p2.txt [/workspace/proj/p1.txt, /workspace/proj/p2.txt]",
      "tool apply_patch failed: /workspace/proj/half2.txt [/workspace/proj/half2.txt] (apply_patch verification failed: Error: Failed to find expected lines in /workspace/proj/half2.txt:\nno such line)",
      "tool apply_patch failed: /workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt [/workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt] (BadResource: FileSystem.writeFile (/workspace/proj/sub/keep.txt/inner.txt))",
      "tool apply_patch ok: /workspace/proj/old-name.txt, /workspace/proj/new-name.txt [/workspace/proj/old-name.txt, /workspace/proj/new-name.txt]",
      "tool apply_patch ok: /workspace/proj/doomed.txt [/workspace/proj/doomed.txt]",
      "tool bash ok: echo shell > shell.txt",
      "result ok: ",
    ],
  },
  opencode: {
    format: "opencode",
    steps: [
      "tool apply_patch ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool apply_patch ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool apply_patch ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool apply_patch ok: /workspace/proj/p1.txt, /workspace/proj/p2.txt [/workspace/proj/p1.txt, /workspace/proj/p2.txt]",
      "tool apply_patch failed: /workspace/proj/half2.txt [/workspace/proj/half2.txt] (apply_patch verification failed: Error: Failed to find expected lines in /workspace/proj/half2.txt:\nno such line)",
      "tool apply_patch failed: /workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt [/workspace/proj/half1.txt, /workspace/proj/sub/keep.txt/inner.txt] (BadResource: FileSystem.writeFile (/workspace/proj/sub/keep.txt/inner.txt))",
      "tool apply_patch ok: /workspace/proj/old-name.txt, /workspace/proj/new-name.txt [/workspace/proj/old-name.txt, /workspace/proj/new-name.txt]",
      "tool apply_patch ok: /workspace/proj/doomed.txt [/workspace/proj/doomed.txt]",
      "tool bash ok: echo shell > shell.txt",
      "tool task ok: write a file",
      "result ok: ",
    ],
  },
  qwen: {
    format: "qwen",
    steps: [
      "tool write_file ok: /workspace/proj/new.txt [/workspace/proj/new.txt]",
      "tool read_file ok: /workspace/proj/edit.txt",
      "tool edit ok: /workspace/proj/edit.txt [/workspace/proj/edit.txt]",
      "tool read_file ok: /workspace/proj/multi.txt",
      "tool edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool edit ok: /workspace/proj/multi.txt [/workspace/proj/multi.txt]",
      "tool edit failed: /workspace/proj/p1.txt [/workspace/proj/p1.txt] (File /workspace/proj/p1.txt has not been read in this session. Use the read_file tool first to load the current content (a partial read with offset / limit is fine — you only need to have seen the bytes you intend to edit) before editing it.)",
      "tool run_shell_command ok: echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt",
      "tool agent ok: write a file",
      "text: All done.",
      'prompt: Background agent "general-purpose: write a file" completed.',
      "text: All done.",
      "result ok: All done.",
    ],
  },
};

const RECORDED = fileURLToPath(new URL("../conformance/recorded/", import.meta.url));

const STREAMS = [
  ...Object.entries(FIXTURES_EXPECTED).map(([fixture, expected]) => {
    const [agent, name = "session"] = fixture.split(":") as [string, string?];
    return { stream: `fixtures/${agent}/${name}.jsonl`, file: `${FIXTURES}${agent}/${name}.jsonl`, ...expected };
  }),
  ...Object.entries(RECORDED_EXPECTED).map(([name, expected]) => ({
    stream: `recorded/${name}.jsonl`,
    file: `${RECORDED}${name}.jsonl`,
    ...expected,
  })),
];

describe.each(STREAMS)("$stream as a conversation", ({ file, format, steps }) => {
  const lines = readFileSync(file, "utf8").split("\n");

  it("yields its prompt, texts, tool calls and result, by its format's name", () => {
    expect(digest(read(format, lines))).toEqual(steps);
  });

  it("yields the same when the format is detected", () => {
    const reader = createConversationReader("auto");
    const all = lines.flatMap((line) => reader.line(line));
    expect(reader.format).toBe(format);
    expect(digest([...all, ...reader.end()])).toEqual(steps);
  });

  it("yields the same with CRLF line endings", () => {
    expect(
      digest(
        read(
          format,
          lines.map((line) => `${line}\r`),
        ),
      ),
    ).toEqual(steps);
  });
});
