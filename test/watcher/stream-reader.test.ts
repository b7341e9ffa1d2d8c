import { describe, expect, it } from "vitest";
import { StreamReader } from "../../src/watcher/stream-reader.js";
import { Reporter } from "../../src/report.js";
import { fixture } from "../agents/helpers.js";

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

  it("says nothing when the stream is the named agent's, or when auto-detection reads it", () => {
    expect(warningsReading("claude", fixture("claude").session)).toEqual([]);
    expect(warningsReading("auto", fixture("codex").session)).toEqual([]);
  });
});
