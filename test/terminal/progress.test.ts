import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { formatBytes, formatDuration, ProgressLine, progressText } from "../../src/terminal/progress.js";
import { Reporter } from "../../src/report/reporter.js";
import { runCli } from "../kit/cli.js";
import { runOnTerminal } from "../kit/terminal.js";
import { perTest } from "../kit/fixtures.js";
import { isBlobDownload, isBlobUpload, startProxy, v1Only, type Proxy } from "../kit/sync.js";
import { commitFiles } from "../kit/remote.js";

/**
 * Long pushes and pulls show files, bytes and the time left on one stderr line, on a terminal
 * only (issue 20 item 4: "a 2,000-file push or pull prints nothing for a minute").
 */

describe("the progress text", () => {
  it("says files, bytes in the total's unit, and the time left at the rate so far", () => {
    expect(progressText("pushing", { files: 120, bytes: 3 * 1024 ** 2 }, { files: 2000, bytes: 48 * 1024 ** 2 }, 10_000)).toBe(
      "pushing 120/2000 files, 3.0/48.0 MiB, about 2 min 30 s left",
    );
    expect(progressText("pulling", { files: 0, bytes: 0 }, { files: 3, bytes: 900 }, 0)).toBe("pulling 0/3 files, 0/900 B");
    expect(progressText("reading", { files: 1, bytes: 300 }, { files: 3, bytes: 900 }, 1000)).toBe(
      "reading 1/3 files, 300/900 B, about 2 s left",
    );
    expect(formatBytes(1536, 4096)).toBe("1.5/4.0 KiB");
    expect(formatDuration(400)).toBe("1 s");
    expect(formatDuration(2 * 3600_000 + 5 * 60_000)).toBe("2 h 5 min");
  });

  it("is drawn only on a terminal, after a second, and the reporter's lines go above it", () => {
    let now = 0;
    const written: string[] = [];
    const stream = { isTTY: true, write: (text: string) => written.push(text) };
    const report = new Reporter({ stream, color: false });
    const line = new ProgressLine(report, stream, () => now);
    const total = { files: 4, bytes: 4000 };
    line.update("pulling", { files: 0, bytes: 0 }, total);
    now = 500;
    line.update("pulling", { files: 1, bytes: 1000 }, total);
    expect(written).toEqual([]);
    now = 1000;
    line.update("pulling", { files: 2, bytes: 2000 }, total);
    report.info("commit", "a line of its own");
    line.update("pulling", { files: 4, bytes: 4000 }, total);
    expect(written.join("")).toBe(
      "\r\x1b[Kuspark: pulling 2/4 files, 2.0/3.9 KiB, about 1 s left" +
        "\r\x1b[K" +
        "uspark: a line of its own\n" +
        "\r\x1b[Kuspark: pulling 2/4 files, 2.0/3.9 KiB, about 1 s left" +
        "\r\x1b[K",
    );
    const piped: string[] = [];
    const inPipe = new ProgressLine(
      new Reporter({ stream: { write: () => undefined } }),
      { write: (text: string) => piped.push(text) },
      () => (now += 1000),
    );
    for (let i = 0; i < 3; i++) inPipe.update("pushing", { files: i, bytes: i }, total);
    expect(piped).toEqual([]);
  });
});

describe("the progress line on a narrow terminal", () => {
  it("is cut to one column less than the terminal's width, so that it never wraps and \\r redraws it whole; a width of 0 (unknown) is taken as 80, which this line fits", () => {
    for (const [columns, expected] of [
      [30, "uspark: pulling 2/4 files, 2…"],
      [0, "uspark: pulling 2/4 files, 2.0/3.9 KiB, about 1 s left"],
    ] as const) {
      let now = 0;
      const written: string[] = [];
      const stream = { isTTY: true, columns, write: (text: string) => written.push(text) };
      const line = new ProgressLine(new Reporter({ stream, color: false }), stream, () => now);
      line.update("pulling", { files: 0, bytes: 0 }, { files: 4, bytes: 4000 });
      now = 1000;
      line.update("pulling", { files: 2, bytes: 2000 }, { files: 4, bytes: 4000 });
      expect(written).toEqual([`\r\x1b[K${expected}`]);
    }
  });
});

describe("progress through the built CLI", () => {
  const t = perTest("uspark-progress-", { server: true });
  let proxy: Proxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  /** A v1 server (one request a blob) whose blob transfers each take 400 ms: a transfer of four lasts over a second. */
  async function slowServer(): Promise<string> {
    proxy = await startProxy(
      t.server!.url,
      (req) => v1Only(req) ?? (isBlobUpload(req) || isBlobDownload(req) ? { kind: "forward-after", before: () => delay(400) } : undefined),
    );
    return proxy.url;
  }
  const FILES = { "a.txt": "a".repeat(3000), "b.txt": "b".repeat(3000), "c.txt": "c".repeat(3000), "d.txt": "d".repeat(3000) };
  const PROGRESS = /uspark: pulling [1-3]\/4 files, [\d.]+\/11\.7 KiB, about \d+ s left/;

  it("a pull on a terminal shows the line while it lasts and clears it; in a pipe or a JSON log there is none", async () => {
    await commitFiles(t.server!.url, "p1", "", FILES);
    const url = await slowServer();
    const pull = (root: string, ...extra: string[]) => {
      mkdirSync(path.join(t.root, root));
      return ["pull", "--project-id", "p1", "--api-url", url, "--root", path.join(t.root, root), "--concurrency", "1", ...extra];
    };
    const seen = await runOnTerminal(pull("tty"));
    expect(seen.code, seen.screen).toBe(0);
    expect(seen.raw).toMatch(PROGRESS);
    expect(seen.screen).not.toMatch(/pulling \d/);
    expect(seen.screen).toMatch(/^uspark: pulled 4 files, 0 unchanged$/m);

    const piped = await runCli(pull("pipe"));
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).not.toMatch(/pulling \d|\r/);

    const json = await runOnTerminal(pull("json", "--log-format", "json"));
    expect(json.code, json.screen).toBe(0);
    expect(json.raw).not.toMatch(/pulling \d/);
  });

  it("a push on a terminal shows the line while it lasts and clears it", async () => {
    for (const [name, content] of Object.entries(FILES)) writeFileSync(path.join(t.root, name), content);
    const seen = await runOnTerminal([
      "push",
      "--project-id",
      "p1",
      "--api-url",
      await slowServer(),
      "--root",
      t.root,
      "--concurrency",
      "1",
    ]);
    expect(seen.code, seen.screen).toBe(0);
    expect(seen.raw).toMatch(/uspark: pushing [1-3]\/4 files, [\d.]+\/11\.7 KiB, about \d+ s left/);
    expect(seen.screen).not.toMatch(/pushing \d/);
    expect(seen.screen).toMatch(/^uspark: push: 4 files pushed in 1 commit, 0 unchanged$/m);
  });
});
