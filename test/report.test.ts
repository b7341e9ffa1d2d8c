import { describe, expect, it } from "vitest";
import { colorWanted, Reporter, type ReporterOptions } from "../src/report.js";

function capture(options: ReporterOptions = {}) {
  const lines: string[] = [];
  const report = new Reporter({ color: false, ...options, stream: { write: (text: string) => lines.push(text) } });
  return { report, lines };
}

describe("Reporter", () => {
  it("should print warnings and info by default, not debug", () => {
    const { report, lines } = capture();
    report.debug("x", "hidden");
    report.info("x", "shown");
    report.warn("x", "careful");
    expect(lines).toEqual(["uspark: shown\n", "uspark: warning: careful\n"]);
  });

  it("should print only errors when quiet", () => {
    const { report, lines } = capture({ verbosity: "quiet" });
    report.info("x", "no");
    report.warn("x", "no");
    report.error("x", "yes");
    expect(lines).toEqual(["uspark: error: yes\n"]);
  });

  it("should write one JSON record per line with the event and fields", () => {
    const { report, lines } = capture({ format: "json", verbosity: "verbose" });
    report.debug("change", "detected a.ts", { path: "a.ts" });
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({ level: "debug", event: "change", message: "detected a.ts", path: "a.ts" });
    expect(typeof record.time).toBe("string");
  });

  it("should never print a secret, in text or JSON", () => {
    for (const format of ["text", "json"] as const) {
      const { report, lines } = capture({ format, secrets: ["s3cr3t"] });
      report.error("auth", "token s3cr3t was refused", { token: "s3cr3t" });
      expect(lines.join("")).not.toContain("s3cr3t");
    }
  });

  it("should colour only when asked", () => {
    const { report, lines } = capture({ color: true });
    report.error("x", "red");
    expect(lines[0]).toContain("\u001b[31m");
  });
});

describe("colorWanted", () => {
  it("should follow the TTY unless NO_COLOR or FORCE_COLOR say otherwise", () => {
    expect(colorWanted(true, {})).toBe(true);
    expect(colorWanted(false, {})).toBe(false);
    expect(colorWanted(true, { NO_COLOR: "1" })).toBe(false);
    expect(colorWanted(false, { FORCE_COLOR: "1" })).toBe(true);
    expect(colorWanted(true, { FORCE_COLOR: "0" })).toBe(false);
    expect(colorWanted(true, { TERM: "dumb" })).toBe(false);
  });
});
