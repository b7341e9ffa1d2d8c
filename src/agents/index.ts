import { acai } from "./acai.js";
import { amp } from "./amp.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { copilot } from "./copilot.js";
import { cursor } from "./cursor.js";
import { droid } from "./droid.js";
import { gemini } from "./gemini.js";
import { kimi } from "./kimi.js";
import { opencode } from "./opencode.js";
import { qwen } from "./qwen.js";
import type { AgentFormat } from "./types.js";

/** Every agent stream format this watcher reads, by the name `--agent` takes. */
export const AGENTS: Readonly<Record<string, AgentFormat>> = Object.freeze({
  claude,
  codex,
  gemini,
  opencode,
  cursor,
  qwen,
  amp,
  acai,
  kimi,
  copilot,
  droid,
});

export const agentNames: readonly string[] = Object.freeze(Object.keys(AGENTS));

/** The format called `name`, if there is one (never one of Object's own keys). */
export function agentByName(name: string): AgentFormat | undefined {
  return Object.hasOwn(AGENTS, name) ? AGENTS[name] : undefined;
}

export { createAutoParser, DETECTION_ORDER, type AutoParserOptions } from "./detect.js";
export type { AgentFormat, AgentParser, ChangeSink, FileChange } from "./types.js";
