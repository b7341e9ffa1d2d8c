import path from "node:path";

/**
 * The agents by their command (`uspark run -- <agent command …>`): which stream format the command
 * speaks, and whether it was started with the flag that makes it speak it. The agent's arguments
 * are never rewritten: a missing flag is only named in a warning (the file watcher still syncs).
 */

/** A flag the agent needs for its JSON stream: any of `names` (with `value`, if given), or a subcommand word. */
type Requirement = { names: readonly string[]; value?: string } | { subcommand: readonly string[] };

interface KnownAgent {
  /** The `--agent` format name. */
  format: string;
  /** How the stream is switched on, as the warning shows it. */
  streamFlags: string;
  requires: readonly Requirement[];
}

const OUTPUT_FORMAT_STREAM_JSON: Requirement = { names: ["--output-format"], value: "stream-json" };
const PRINT: Requirement = { names: ["-p", "--print"] };

const OPENCODE_RUN: KnownAgent = {
  format: "opencode",
  streamFlags: "run --format json",
  requires: [{ subcommand: ["run"] }, { names: ["--format"], value: "json" }],
};

/** By the command's basename; the flags are those of fixtures/README.md. */
const KNOWN_AGENTS: Readonly<Record<string, KnownAgent>> = {
  claude: {
    format: "claude",
    streamFlags: "-p --output-format stream-json --verbose",
    requires: [PRINT, OUTPUT_FORMAT_STREAM_JSON, { names: ["--verbose"] }],
  },
  codex: {
    format: "codex",
    streamFlags: "exec --json",
    requires: [{ subcommand: ["exec", "e"] }, { names: ["--json", "--experimental-json"] }],
  },
  gemini: {
    format: "gemini",
    streamFlags: "--output-format stream-json",
    requires: [{ names: ["--output-format", "-o"], value: "stream-json" }],
  },
  qwen: {
    format: "qwen",
    streamFlags: "--output-format stream-json",
    requires: [{ names: ["--output-format", "-o"], value: "stream-json" }],
  },
  "cursor-agent": { format: "cursor", streamFlags: "-p --output-format stream-json", requires: [PRINT, OUTPUT_FORMAT_STREAM_JSON] },
  kimi: {
    format: "kimi",
    streamFlags: "--print --output-format stream-json",
    requires: [{ names: ["--print"] }, OUTPUT_FORMAT_STREAM_JSON],
  },
  opencode: OPENCODE_RUN,
  // Kilo Code is OpenCode's fork: the same subcommand, flag and stream.
  kilo: OPENCODE_RUN,
  kilocode: OPENCODE_RUN,
  copilot: {
    format: "copilot",
    streamFlags: "-p --output-format json",
    requires: [{ names: ["-p", "--prompt"] }, { names: ["--output-format"], value: "json" }],
  },
  droid: {
    format: "droid",
    streamFlags: "exec --output-format stream-json",
    requires: [{ subcommand: ["exec"] }, { names: ["-o", "--output-format"], value: "stream-json" }],
  },
  amp: { format: "amp", streamFlags: "--execute --stream-json", requires: [{ names: ["--stream-json"] }] },
  acai: { format: "acai", streamFlags: "instruct --streaming-json", requires: [{ names: ["--streaming-json"] }] },
};

/**
 * Agents whose output has no tool events in any mode (Continue's `cn -p`, Auggie's `--print`
 * with one final result line, Crush's plain text): the file watcher is the only live source.
 */
const AGENTS_WITHOUT_FILE_EVENTS: ReadonlySet<string> = new Set(["cn", "auggie", "crush"]);

/** The command's name as a user would call it: `/usr/bin/claude`, `claude.cmd` and `claude.exe` are all `claude`. */
export function commandName(command: string): string {
  return path.basename(command).replace(/\.(exe|cmd|bat|js|mjs)$/i, "");
}

/** The stream format of a known agent command, or "auto" (detected from the first events). */
export function agentForCommand(command: string): string {
  return KNOWN_AGENTS[commandName(command)]?.format ?? "auto";
}

/** Is this an agent whose output names no file it changes (so only the file watcher sees them)? */
export function printsNoFileEvents(command: string): boolean {
  return AGENTS_WITHOUT_FILE_EVENTS.has(commandName(command));
}

/**
 * How the agent of a stream format is started so that it prints its JSON stream, as a warning
 * names it (`claude -p --output-format stream-json --verbose`); for "auto", the common ones.
 */
export function streamCommandFor(format: string): string {
  const commands = Object.entries(KNOWN_AGENTS).map(([command, agent]) => ({
    format: agent.format,
    text: `${command} ${agent.streamFlags}`,
  }));
  const known = commands.find((command) => command.format === format);
  if (known) return known.text;
  return (
    commands
      .slice(0, 3)
      .map((command) => command.text)
      .join(", ") + ", …"
  );
}

/** The flags to name in a warning when a known agent was started without its JSON stream; else undefined. */
export function missingStreamFlags(command: string, args: readonly string[]): string | undefined {
  const agent = KNOWN_AGENTS[commandName(command)];
  if (!agent) return undefined;
  return agent.requires.every((requirement) => satisfied(requirement, args)) ? undefined : agent.streamFlags;
}

function satisfied(requirement: Requirement, args: readonly string[]): boolean {
  // `codex exec`, `opencode run`, wherever the options before it put it.
  if ("subcommand" in requirement) return args.some((arg) => requirement.subcommand.includes(arg));
  const { names, value } = requirement;
  return args.some((arg, i) => {
    if (value === undefined) return names.includes(arg);
    if (names.includes(arg)) return args[i + 1] === value;
    return names.some((name) => arg === `${name}=${value}`);
  });
}
