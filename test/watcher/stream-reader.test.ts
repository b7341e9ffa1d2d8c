import { describe, expect, it } from "vitest";
import { StreamReader } from "../../src/watcher/stream-reader.js";
import { Reporter } from "../../src/report/reporter.js";
import { fixture } from "../kit/agent-fixtures.js";

/** The warnings a StreamReader says while reading `session` as `agent`'s stream. */
function warningsReading(agent: string, session: string, fsWatch = true): string[] {
  const warnings: string[] = [];
  const report = new Reporter({ listener: (record) => (record.level === "warn" && warnings.push(record.message), true) });
  const reader = new StreamReader({ agent, report, onChange: () => {}, onAgent: () => {}, fsWatch, warnNoJson: true });
  const bytes = Buffer.from(session);
  for (let at = 0; at < bytes.length; at += 1000) reader.push(bytes.subarray(at, at + 1000));
  reader.end();
  return warnings;
}

describe("StreamReader", () => {
  it("warns once when a named agent's stream is another agent's, naming both and the way out", () => {
    expect(warningsReading("claude", fixture("codex").session)).toEqual([
      "this stream looks like codex's, not claude's: its tool events go unread, only the file watcher sees its changes (uspark watch detects the format; or --agent codex)",
    ]);
    expect(warningsReading("claude", fixture("codex").session, false)).toEqual([
      "this stream looks like codex's, not claude's: its tool events go unread and the file watcher is off (--no-fs-watch), so no change will be seen (uspark watch detects the format; or --agent codex)",
    ]);
  });

  it("warns at the end when the output was one JSON object of no agent's (claude -p --output-format json)", () => {
    const result = JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "done", session_id: "s" });
    expect(warningsReading("claude", `${result}\n`)).toEqual([
      "the agent's output was one JSON object, not a stream of claude events: was it started without its stream flag (claude -p --output-format stream-json --verbose)? Only the file watcher saw its changes",
    ]);
    expect(warningsReading("claude", `${result}\n`, false)[0]).toMatch(/With --no-fs-watch, none of its changes was seen$/);
    // Auto-detection: the same, naming every agent's flag.
    expect(warningsReading("auto", `${result}\n`)[0]).toMatch(
      /^the agent's output was one JSON object, not a stream of an agent's events: was it started without its stream flag \(claude -p --output-format stream-json --verbose, codex exec --json, /,
    );
  });

  it("says nothing when the stream is the named agent's, or when auto-detection reads it", () => {
    expect(warningsReading("claude", fixture("claude").session)).toEqual([]);
    expect(warningsReading("auto", fixture("codex").session)).toEqual([]);
  });
});
