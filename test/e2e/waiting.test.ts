import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";
import { remoteFiles, startProxy, type Proxy } from "../kit/sync.js";
import { perTest, writeEvents } from "../kit/fixtures.js";

/**
 * A server that does not answer is said within 5 s on stderr, for push, pull, run and watch
 * (issue 20 item 4: "a server that is down makes push wait 60 s in silence"), and its return once.
 */

const t = perTest("uspark-waiting-", { server: true });
const FAKE_AGENT = path.join(import.meta.dirname, "fixtures", "fake-agent.sh");
const SAID_WITHIN_MS = 5000;
/**
 * A refused connection is said with the first failed request, at once; measured from the CLI's
 * start, which a loaded machine may slow by seconds: the bound leaves room for that.
 */
const REFUSED_SAID_WITHIN_MS = 2 * SAID_WITHIN_MS;

/** A port nothing listens on (yet): the reference server behind a proxy that is down. */
let proxy: Proxy | undefined;
async function downServer(): Promise<{ port: number; up: () => Promise<void> }> {
  proxy = await startProxy(t.server!.url);
  await proxy.down();
  return { port: Number(new URL(proxy.url).port), up: () => proxy!.up() };
}

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const waiting = (port: number) =>
  new RegExp(`uspark: warning: waiting for 127\\.0\\.0\\.1:${port}: connection refused, retry 1 in \\d+ m?s\\n`);

describe("a server that does not answer", () => {
  it("push says it within 5 s, says once that it came back, and pushes", async () => {
    const { port, up } = await downServer();
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    const { child, result } = await startCli(["push", "--project-id", "p1", "--api-url", `http://127.0.0.1:${port}`, "--root", t.root], {
      input: "",
    });
    await waitForOutput(child.stderr, (text) => waiting(port).test(text), REFUSED_SAID_WITHIN_MS);
    await up();
    const end = await result;
    expect(end.code, end.stderr).toBe(0);
    expect(end.stderr.match(new RegExp(`127\\.0\\.0\\.1:${port} answers again`, "g"))).toHaveLength(1);
    expect((await remoteFiles(t.server!.url)).get("a.txt")?.toString()).toBe("a\n");
  });

  it("push to a server that takes the connection and never answers says so within 5 s", async () => {
    proxy = await startProxy(t.server!.url, () => ({ kind: "stall" }));
    const port = new URL(proxy.url).port;
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    const { child, result } = await startCli(
      ["push", "--project-id", "p1", "--api-url", proxy.url, "--root", t.root, "--flush-timeout", "6000"],
      { input: "" },
    );
    // Counted from the request the server took (a loaded machine may take a while to start the CLI).
    await waitForOutput(
      child.stderr,
      (text) => text.includes(`uspark: warning: waiting for 127.0.0.1:${port}: no answer for 3 s\n`),
      3 * SAID_WITHIN_MS,
    );
    expect(Date.now() - proxy.seen[0]!.at).toBeLessThan(SAID_WITHIN_MS);
    expect((await result).code).toBe(1);
  });

  it("push whose blob upload the server takes and never answers says so within 5 s (a small upload owes an answer at once)", async () => {
    proxy = await startProxy(t.server!.url, (req) => (req.method === "POST" && req.url.endsWith("/blobs") ? { kind: "stall" } : undefined));
    const port = new URL(proxy.url).port;
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    const { child, result } = await startCli(
      ["push", "--project-id", "p1", "--api-url", proxy.url, "--root", t.root, "--flush-timeout", "6000"],
      { input: "" },
    );
    await waitForOutput(
      child.stderr,
      (text) => text.includes(`uspark: warning: waiting for 127.0.0.1:${port}: no answer for 3 s\n`),
      3 * SAID_WITHIN_MS,
    );
    const upload = proxy.seen.find((req) => req.url.endsWith("/blobs"))!;
    expect(Date.now() - upload.at).toBeLessThan(SAID_WITHIN_MS);
    expect((await result).code).toBe(1);
  });

  it("pull says it within 5 s, then gives up at --timeout (exit 1)", async () => {
    const { port } = await downServer();
    const { child, result } = await startCli(
      ["pull", "--project-id", "p1", "--api-url", `http://127.0.0.1:${port}`, "--root", t.root, "--timeout", "2000"],
      { input: "" },
    );
    await waitForOutput(child.stderr, (text) => waiting(port).test(text), REFUSED_SAID_WITHIN_MS);
    expect((await result).code).toBe(1);
  });

  it("run says it within 5 s while the agent works; at most one such line every 2 s", async () => {
    const { port } = await downServer();
    const args = [
      "run",
      "--project-id",
      "p1",
      "--api-url",
      `http://127.0.0.1:${port}`,
      "--root",
      t.root,
      "--flush-timeout",
      "5000",
      "--log-format",
      "json",
    ];
    const { child, result } = await startCli([...args, "--", "sh", FAKE_AGENT, "0", "--", path.join(t.root, "a.txt")]);
    await waitForOutput(
      child.stderr,
      (text) => text.includes(`"message":"waiting for 127.0.0.1:${port}: connection refused, retry 1 in`),
      REFUSED_SAID_WITHIN_MS,
    );
    const end = await result;
    expect(end.code).toBe(1);
    const said = end.stderr
      .split("\n")
      .filter((line) => line.includes('"level":"warn","event":"retry"'))
      .map((line) => Date.parse((JSON.parse(line) as { time: string }).time));
    expect(said.length).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < said.length; i++) expect(said[i]! - said[i - 1]!).toBeGreaterThanOrEqual(2000);
  });

  it("watch says it within 5 s while the stream is open", async () => {
    const { port } = await downServer();
    const { child, result } = await startCli([
      "watch-claude",
      "--project-id",
      "p1",
      "--api-url",
      `http://127.0.0.1:${port}`,
      "--root",
      t.root,
      "--flush-timeout",
      "1000",
    ]);
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    child.stdin.write(writeEvents(path.join(t.root, "a.txt"), "a\n"));
    await waitForOutput(child.stderr, (text) => waiting(port).test(text), REFUSED_SAID_WITHIN_MS);
    child.stdin.end();
    expect((await result).code).toBe(1);
  });
});
