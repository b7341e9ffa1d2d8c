/** What every agent parser reports: one file that a tool call wrote or deleted. */
export interface FileChange {
  /** The path as the agent wrote it: absolute, or relative to `cwd` (or the project root). */
  path: string;
  kind: "write" | "delete";
  /** What caused it: the tool's name ("Edit", "apply_patch", …) or "fs" for the file watcher. */
  cause: string;
  /** True once the agent reported success; false for a call whose result never came. */
  confirmed: boolean;
  /** The directory a relative `path` is relative to, when the agent told us. */
  cwd?: string;
}

export type ChangeSink = (change: FileChange) => void;

/** A stateful reader of one agent's stream, fed line by line. It never throws. */
export interface AgentParser {
  /** One line without its "\n" (it may still end in "\r"). The buffer is only valid during the call. */
  line(line: Buffer): void;
  /** End of input: reports calls still waiting for their result, with `confirmed: false`. */
  end(): void;
}

export interface AgentFormat {
  readonly name: string;
  /** Does this JSON event belong to this agent's stream? Auto-detection asks each format in turn. */
  detect(event: unknown): boolean;
  create(emit: ChangeSink): AgentParser;
}
