import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";
import { remoteFiles, startMemoryRef } from "../kit/sync.js";
import { journaledPaths, perTest, UNREACHABLE, writeEvents } from "../kit/fixtures.js";

const t = perTest("uspark-cli-signals-");

function watchArgs(apiUrl: string, ...extra: string[]): string[] {
  return ["watch-claude", "--project-id", "p1", "--api-url", apiUrl, "--root", t.root, "--no-fs-watch", "--verbose", ...extra];
}

/** A watch that has seen a Write of `name` and is still reading stdin. */
async function watchingAWrite(apiUrl: string, name: string, ...extra: string[]) {
  const file = path.join(t.root, name);
  writeFileSync(file, "written before the terminal closed\n");
  const cli = await startCli(watchArgs(apiUrl, ...extra));
  cli.child.stdin.write(writeEvents(file));
  await waitForOutput(cli.child.stderr, (text) => text.includes(`detected ${name}`));
  return cli;
}

describe("SIGHUP: the terminal closed, ssh dropped (defect 13)", () => {
  it("should flush within the timeout and journal what is left, not die on the spot", async () => {
    const { child, result } = await watchingAWrite(UNREACHABLE, "a.txt", "--flush-timeout", "500");
    child.kill("SIGHUP");
    const done = await result;
    expect(done.signal).toBeNull();
    expect(done.code).toBe(1);
    expect(journaledPaths(t.root)).toEqual(["a.txt"]);
  });

  it("should push what is pending and exit 0 when the server is up", async () => {
    t.server = await startMemoryRef();
    const { child, result } = await watchingAWrite(t.server!.url, "a.txt", "--debounce", "60000", "--max-wait", "60000");
    child.kill("SIGHUP");
    const done = await result;
    expect(done.code).toBe(0);
    expect((await remoteFiles(t.server!.url)).get("a.txt")?.toString()).toBe("written before the terminal closed\n");
  });

  it("should journal at once and exit 129 on a second SIGHUP", async () => {
    const { child, result } = await watchingAWrite(UNREACHABLE, "stuck.txt");
    child.kill("SIGHUP");
    await waitForOutput(child.stderr, (text) => text.includes("pushing what is pending"));
    child.kill("SIGHUP");
    const done = await result;
    expect(done.code).toBe(129);
    expect(journaledPaths(t.root)).toEqual(["stuck.txt"]);
  });
});
