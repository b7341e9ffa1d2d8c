import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  colorWanted,
  escapeControl,
  guardOutput,
  redactCredentials,
  redactUrlCredentials,
  Reporter,
  secretMasker,
  type ReporterOptions,
} from "../../src/report/reporter.js";

function capture(options: ReporterOptions = {}) {
  const lines: string[] = [];
  const report = new Reporter({ color: false, ...options, stream: { write: (text: string) => lines.push(text) } });
  return { report, lines };
}

describe("Reporter", () => {
  it("should print warnings and info by default, not debug", () => {
    const { report, lines } = capture();
    report.debug("change", "hidden");
    report.info("commit", "shown");
    report.warn("conflict", "careful");
    expect(lines).toEqual(["uspark: shown\n", "uspark: warning: careful\n"]);
  });

  it("should print only errors when quiet", () => {
    const { report, lines } = capture({ verbosity: "quiet" });
    report.info("commit", "no");
    report.warn("conflict", "no");
    report.error("usage", "yes");
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
      report.error("sync-stopped", "token s3cr3t was refused", { token: "s3cr3t" });
      expect(lines.join("")).not.toContain("s3cr3t");
    }
  });

  it("should print paths that hold a short token's letters whole, and the token itself never", () => {
    for (const format of ["text", "json"] as const) {
      const { report, lines } = capture({ format, secrets: ["dev"] });
      report.info("commit", "committed v1: 2 files (src/devices/dev.ts, dev.md)", { token: "dev", paths: ["src/devices/dev.ts"] });
      report.error("sync-stopped", "token dev was refused");
      const out = lines.join("");
      expect(out).toContain("src/devices/dev.ts");
      expect(out).toContain("dev.md");
      expect(out).not.toMatch(/\bdev was|"dev"/);
    }
  });

  it("should colour only when asked", () => {
    const { report, lines } = capture({ color: true });
    report.error("usage", "red");
    expect(lines[0]).toContain("\u001b[31m");
  });
});

describe("secretMasker", () => {
  it.each([
    ["a long token, wherever it stands", "k3y-0123456789", "x k3y-0123456789 y/k3y-0123456789.txt", "x *** y/***.txt"],
    ["a short one standing apart", "dev", "Bearer dev", "Bearer ***"],
    ["a short one quoted, or a value", "dev", `{"token":"dev"} t=dev (dev)`, `{"token":"***"} t=*** (***)`],
    ["a short one at both ends of the text", "dev", "dev", "***"],
    ["not inside words or paths", "dev", "src/devices/dev.ts devdev dev-1", "src/devices/dev.ts devdev dev-1"],
    ["regular expression characters taken as they are", "a.b", "a.b axb", "*** axb"],
    ["no secret", "", "text", "text"],
  ])("%s", (_, secret, text, masked) => {
    expect(secretMasker(secret)(text)).toBe(masked);
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

describe("names in human-readable lines", () => {
  it("should escape ESC, newline, CR, other controls, DEL and bidi overrides", () => {
    expect(escapeControl("a\u001b[31mred")).toBe("a\\x1b[31mred");
    expect(escapeControl("x\ny\rz\tw")).toBe("x\\ny\\rz\\tw");
    expect(escapeControl("\u0000\u007f\u009b")).toBe("\\x00\\x7f\\x9b");
    expect(escapeControl("evil\u202etxt.exe")).toBe("evil\\u{202e}txt.exe");
    expect(escapeControl("café/日本.txt")).toBe("café/日本.txt");
  });

  it("should keep a forged log line on the line of the real one, uncoloured", () => {
    const { report, lines } = capture();
    report.warn("refused", "not synced a\nuspark: synced: everything\u001b[0m.txt");
    expect(lines).toEqual(["uspark: warning: not synced a\\nuspark: synced: everything\\x1b[0m.txt\n"]);
  });

  it("should keep the exact name in the JSON log, as a JSON string", () => {
    const { report, lines } = capture({ format: "json" });
    const name = "a\nb\u001b[31m.txt";
    report.warn("refused", `not synced ${name}`, { path: name });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.trimEnd()).not.toMatch(/[\u0000-\u001f]/);
    expect(JSON.parse(lines[0]!)).toMatchObject({ message: `not synced ${name}`, path: name });
  });
});

describe("redactCredentials", () => {
  it("should hide userinfo in URLs, also misspelt ones", () => {
    expect(redactCredentials("http://bob:hunter2@example.com:99999/x")).toBe("http://***@example.com:99999/x");
    expect(redactCredentials("htps://bob:hunter2@example.com")).toBe("htps://***@example.com");
    expect(redactCredentials("http:/bob:hunter2@example.com")).toBe("http:/***@example.com");
    expect(redactCredentials('invalid API URL "bob:hunter2@example.com"')).toBe('invalid API URL "***@example.com"');
    expect(redactCredentials("https://ghp_abc@host/p")).toBe("https://***@host/p");
  });

  it("should hide credential-like query parameters and keep the rest", () => {
    expect(redactCredentials("https://h/p?token=abc&page=2")).toBe("https://h/p?token=***&page=2");
    expect(redactCredentials("https://h/p?a=1&api_key=k1;access_token=t2#x")).toBe("https://h/p?a=1&api_key=***;access_token=***#x");
    expect(redactCredentials("https://h/p?PASSWORD=pw")).toBe("https://h/p?PASSWORD=***");
  });

  it("should leave ordinary text alone", () => {
    const text = "pushed src/a.ts to https://uspark.example.com/api (mail me at a@b.c, 10:30)";
    expect(redactCredentials(text)).toBe(text);
    expect(redactUrlCredentials(text)).toBe(text);
  });

  it("in any line, should hide the credentials of what has a scheme, also misspelt", () => {
    expect(redactUrlCredentials("cannot reach htps://bob:hunter2@example.com/p?api_key=k (ECONNREFUSED)")).toBe(
      "cannot reach htps://***@example.com/p?api_key=*** (ECONNREFUSED)",
    );
    expect(redactUrlCredentials("http:/bob:hunter2@example.com")).toBe("http:/***@example.com");
  });

  it("should be applied to every line the reporter writes", () => {
    for (const format of ["text", "json"] as const) {
      const { report, lines } = capture({ format });
      report.error("usage", "cannot reach http://u:pw@h:1/?token=t", { url: "http://u:pw@h:1/" });
      expect(lines.join("")).not.toMatch(/pw|token=t/);
    }
  });

  it("should keep a file name that only looks like credentials exact, in text and in JSON", () => {
    for (const name of ["icon:hover@2x.png", "a?token=1.txt", "notes;auth=x.md"]) {
      const text = capture({ format: "text" });
      text.report.warn("refused", `not synced ${name}`);
      expect(text.lines[0]).toContain(`not synced ${name}`);
      const json = capture({ format: "json" });
      json.report.warn("refused", `not synced ${name}`, { path: name });
      expect(JSON.parse(json.lines[0]!)).toMatchObject({ message: `not synced ${name}`, path: name });
    }
  });
});

describe("guardOutput", () => {
  function failingStream(code: string) {
    const stream = new Writable({ write: (_chunk, _encoding, callback) => callback(Object.assign(new Error(code), { code })) });
    return stream;
  }

  it("should stop quietly on EPIPE: the reader went away", async () => {
    const output = guardOutput(failingStream("EPIPE"));
    output.write("one\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(output.state).toBe("closed");
    expect(() => output.write("two\n")).not.toThrow();
  });

  it("should remember any other write error as a failure", async () => {
    const output = guardOutput(failingStream("ENOSPC"));
    output.write("one\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(output.state).toBe("failed");
    expect(output.error?.code).toBe("ENOSPC");
  });

  it("should catch a write that throws", () => {
    const stream = new Writable();
    stream.write = () => {
      throw Object.assign(new Error("EIO"), { code: "EIO" });
    };
    const output = guardOutput(stream);
    expect(() => output.write("x")).not.toThrow();
    expect(output.state).toBe("failed");
  });
});
