import { AGENTS, agentByName } from "../agents/index.js";
import { streamCommandFor } from "../agents/commands.js";
import { createAutoParser } from "../agents/detect.js";
import { FormatCheck } from "../agents/format-check.js";
import type { AgentFormat, AgentParser, FileChange } from "../agents/types.js";
import type { Reporter } from "../report/reporter.js";
import { JsonSniffer } from "../stream/json-sniffer.js";
import { DEFAULT_MAX_LINE_LENGTH, LineSplitter } from "../stream/lines.js";

export interface StreamReaderOptions {
  /** A known agent's name, or "auto". */
  agent: string;
  report: Reporter;
  onChange: (change: FileChange) => void;
  /** Told the format auto-detection found. */
  onAgent: (name: string) => void;
  fsWatch: boolean;
  warnNoJson: boolean;
  maxLineLength?: number;
}

/** Lines of text with no JSON event among them before the stream counts as one without. */
const NO_JSON_LINES = 50;

/**
 * The agent's stream read for changes: split into lines, parsed by the agent's parser (or
 * auto-detected), and its first lines sniffed for JSON (one warning when there is none), for
 * another agent's events than the named one's, and for a lone object instead of a stream (one
 * warning each).
 */
export class StreamReader {
  private readonly parser: AgentParser;
  private readonly splitter: LineSplitter;
  /** Only the first lines are looked at; then it is dropped and costs nothing more. */
  private sniffer: JsonSniffer | undefined;
  /** Only the first bytes are looked at, as the sniffer's: another agent's events, or one lone object. */
  private formatCheck: FormatCheck | undefined;
  private warnedLongLine = false;

  constructor(private readonly options: StreamReaderOptions) {
    this.parser = options.agent === "auto" ? this.autoParser() : AGENTS[options.agent]!.create(options.onChange);
    if (options.warnNoJson) this.sniffer = new JsonSniffer(NO_JSON_LINES, () => this.warnNoJson());
    // A lone object is the no-JSON warning's case too (no stream): said only where that one may be.
    const oneObject = options.warnNoJson ? () => this.warnOneObject() : () => {};
    this.formatCheck = new FormatCheck(agentByName(options.agent), { other: (format) => this.warnOtherFormat(format), oneObject });
    const maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    // The parser itself is the sink: a Claude-shaped one takes long lines in pieces and never holds them whole.
    this.splitter = new LineSplitter(this.parser, { maxLineLength, onOverflow: (length) => this.warnLongLine(length, maxLineLength) });
  }

  /** Raw bytes, chunked any way; only read during the call. */
  push(bytes: Buffer): void {
    if (this.sniffer) {
      this.sniffer.push(bytes);
      if (this.sniffer.decided) this.sniffer = undefined;
    }
    if (this.formatCheck) {
      this.formatCheck.push(bytes);
      if (this.formatCheck.done) this.formatCheck = undefined;
    }
    this.splitter.push(bytes);
  }

  /** One event already parsed (the Agent SDK's), as its JSON line. */
  line(line: Buffer): void {
    this.sniffer = undefined;
    this.formatCheck = undefined;
    this.parser.line(line);
  }

  end(): void {
    this.sniffer?.end();
    this.formatCheck?.end();
    this.splitter.end();
    this.parser.end();
  }

  private autoParser(): AgentParser {
    const { report, onChange, onAgent, fsWatch } = this.options;
    return createAutoParser(onChange, (format) => {
      if (format) {
        onAgent(format.name);
        report.debug("agent", `detected the ${format.name} stream format`, { agent: format.name });
      } else if (!fsWatch) {
        report.warn(
          "agent",
          "no known agent format in this stream, and the file system watcher is off (--no-fs-watch): no change will be seen",
        );
      } else {
        report.debug("agent", "no known agent format in this stream; relying on the file system watcher");
      }
    });
  }

  private warnNoJson(): void {
    const how = streamCommandFor(this.options.agent);
    const seen = this.options.fsWatch ? "Only the file watcher sees its changes" : "With --no-fs-watch, none of its changes is seen";
    this.options.report.warn(
      "no-json",
      `no JSON event in the agent's output so far: was it started without its stream flag (${how})? ${seen}`,
    );
  }

  private warnOneObject(): void {
    const { agent, report } = this.options;
    const how = streamCommandFor(agent);
    const seen = this.options.fsWatch ? "Only the file watcher saw its changes" : "With --no-fs-watch, none of its changes was seen";
    const events = agent === "auto" ? "an agent's events" : `${agent} events`;
    report.warn(
      "one-object",
      `the agent's output was one JSON object, not a stream of ${events}: was it started without its stream flag (${how})? ${seen}`,
      { agent },
    );
  }

  private warnOtherFormat(other: AgentFormat): void {
    const given = this.options.agent;
    const unseen = this.options.fsWatch
      ? "its tool events go unread, only the file watcher sees its changes"
      : "its tool events go unread and the file watcher is off (--no-fs-watch), so no change will be seen";
    this.options.report.warn(
      "agent-format",
      `this stream looks like ${other.name}'s, not ${given}'s: ${unseen} (uspark watch detects the format; or --agent ${other.name})`,
      {
        agent: given,
        detected: other.name,
      },
    );
  }

  private warnLongLine(length: number, limit: number): void {
    if (this.warnedLongLine) return;
    this.warnedLongLine = true;
    this.options.report.warn("long-line", `a line of over ${length} bytes was passed through but not parsed (the limit is ${limit} bytes)`);
  }
}
