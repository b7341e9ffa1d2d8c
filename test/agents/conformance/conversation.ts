import { createConversationReader } from "../../../src/agents/conversation/index.js";
import type { Step } from "../../../src/agents/conversation/types.js";
import { LineSplitter } from "../../../src/stream/lines.js";

/** The stream format of each conformance agent, where its name is not one (Kilo Code writes OpenCode's). */
const FORMAT_OF: Record<string, string> = { kilo: "opencode" };

/** Which streams carry the prompt (the others start with the agent's own events). */
const CARRIES_PROMPT = new Set(["gemini", "copilot", "droid"]);

/**
 * What is wrong with an agent's real stdout read as a conversation, the format detected as
 * `uspark run` would: the format must be the agent's; each path its tool events sync must be
 * among the files of its tool calls; no call may be left running; it must end with a result that
 * says the run went well; and where the stream carries the prompt, it is `prompt`. None: it reads well.
 */
export function conversationProblems(stdout: Buffer, agent: string, streamSyncs: readonly string[], prompt: string): string[] {
  const reader = createConversationReader("auto");
  const steps: Step[] = [];
  const splitter = new LineSplitter((line) => steps.push(...reader.line(line)));
  splitter.push(stdout);
  splitter.end();
  steps.push(...reader.end());
  const format = FORMAT_OF[agent] ?? agent;
  const problems: string[] = [];
  if (reader.format !== format) problems.push(`read as ${String(reader.format)}, not ${format}`);
  const last = new Map<string, Extract<Step, { kind: "tool" }>>();
  for (const step of steps) if (step.kind === "tool") last.set(step.id, step);
  const files = [...last.values()].flatMap((step) => step.files);
  for (const path of streamSyncs)
    if (!files.some((file) => file === path || file.endsWith(`/${path}`))) problems.push(`no tool call names ${path}`);
  for (const step of last.values()) if (step.status === "running") problems.push(`call ${step.id} (${step.name}) left running`);
  const end = steps.at(-1);
  if (end?.kind !== "result" || !end.ok) problems.push(`does not end with a good result: ${JSON.stringify(end)}`);
  const prompts = steps.filter((step) => step.kind === "prompt").map((step) => step.text);
  if (CARRIES_PROMPT.has(format) && prompts[0] !== prompt)
    problems.push(`prompt ${JSON.stringify(prompts[0])}, not ${JSON.stringify(prompt)}`);
  return problems;
}
