import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EVENT_SECTIONS, REPORT_EVENTS, type EventSpec } from "../../src/report/events.js";

/**
 * Every event src/ says with a literal name is in the log's catalogue (src/report/events.ts) at the
 * level it is said at: the compiler checks it too (the Reporter takes no other), this reads the
 * source, so a catalogue that loses an event still said fails here. The page's equality with the
 * catalogue: test/docs-generated.test.ts.
 */

const src = fileURLToPath(new URL("../../src/", import.meta.url));
const events = REPORT_EVENTS as Record<string, EventSpec>;
// `report.warn("event", …)`, or `report.warnOnce(key, "event", …)` (its key first).
const SAID = /\.(?:(error|warn|info|debug)\(\s*|(warnOnce|infoOnce)\(\s*[^,]+,\s*)"([a-z0-9-]+)"/g;

function said(): { where: string; level: string; event: string }[] {
  const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".ts"));
  return files.flatMap((name) =>
    [...readFileSync(path.join(src, name), "utf8").matchAll(SAID)].map((m) => ({
      where: name,
      level: (m[1] ?? m[2]!).replace("Once", ""),
      event: m[3]!,
    })),
  );
}

describe("the log's events", () => {
  const calls = said();

  it("reads the events src/ says (the scan finds them)", () => {
    expect(calls.length).toBeGreaterThan(150);
    expect(calls.map((c) => c.event)).toEqual(expect.arrayContaining(["commit", "summary", "retry", "fswatch"]));
  });

  it("lists every event said, at the level it is said at", () => {
    const unlisted = calls.filter(({ level, event }) => !events[event]?.levels.includes(level as EventSpec["levels"][number]));
    expect(unlisted).toEqual([]);
  });

  it("gives every event a level, a section of the page and when it is said", () => {
    for (const [name, spec] of Object.entries(events)) {
      expect(spec.levels.length, name).toBeGreaterThan(0);
      expect(Object.keys(EVENT_SECTIONS), name).toContain(spec.section);
      expect(spec.when.length, name).toBeGreaterThan(5);
    }
  });
});
