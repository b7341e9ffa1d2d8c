// A transcript read as a conversation (docs/agents.md#the-run-view, docs/web-view.md#pages): what a person
// wants to see of an agent's stream, for every format the agents' parsers read.

/** One step of the conversation, in stream order. Every text is the agent's, unescaped: the reader of a step escapes it. */
export type Step =
  /** The person's prompt, where the stream carries it. */
  | { kind: "prompt"; text: string }
  /** The agent's own words (assistant text; thinking is left out). */
  | { kind: "text"; text: string }
  /**
   * A tool call. `summary` is one short line (a command, a path, a query); `files` are the paths it
   * wrote or deleted, as the change parsers see them (of a failed call: the paths it named, since a
   * failed patch may have written some; where the result lists what was written, that list). A call
   * is reported when it starts and again, with the same `id`, when its result comes (`status` then
   * "ok" or "failed", `error` the reason, cut to 2,000 characters). A result whose call has not come
   * is reported at once with an empty `name`, and again when its call comes. A call without an id
   * gets one of its own (`#1`, …) and stays running.
   */
  | { kind: "tool"; id: string; name: string; summary: string; files: string[]; status: "running" | "ok" | "failed"; error?: string }
  /**
   * The end of a turn or run: the agent's result text, or its failure reason (Claude `result`, Codex
   * `turn.failed`, Gemini and OpenCode error events). Where the end event carries no text (Codex's
   * `turn.completed`, Gemini's `result`, …), a success's text is the agent's last words. A result
   * that repeats the one just reported is not reported again.
   */
  | { kind: "result"; ok: boolean; text: string };

/** Reads one agent's stream line by line; stateful (it pairs calls with results). Never throws. */
export interface ConversationReader {
  /** The format in use once known (detected from the first JSON events, or given). */
  readonly format: string | undefined;
  /**
   * One line without its "\n" (a trailing "\r" is fine); returns the steps it completes (often
   * none). A Buffer is only read during the call, so a line splitter's reused buffer will do.
   */
  line(line: string | Buffer): Step[];
  /** End of input: calls still running are returned as they are. */
  end(): Step[];
}
