// The CLI against `uspark serve --host 0.0.0.0` addressed by another name (docs/api.md, "Host and
// Origin"): it works once --public-url names it, and says why when it does not.

import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it, onTestFinished } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";

const TOKEN = "admin-token-for-names";
/** Names under .test resolve to 127.0.0.1 in the CLI children (test/kit/dns-alias.mjs). */
const ALIAS_ENV = { NODE_OPTIONS: `--import=${fileURLToPath(new URL("../kit/dns-alias.mjs", import.meta.url))}`, USPARK_TOKEN: TOKEN };

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "uspark-cli-names-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A port free right now (the server is told it in --public-url before it listens). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "0.0.0.0", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** `uspark serve --host 0.0.0.0` with `extra` flags on a free port; its port once it listens. */
async function serveOnAllAddresses(extra: (port: number) => string[]): Promise<number> {
  const port = await freePort();
  const serve = await startCli(
    ["serve", "--data", await tempDir(), "--host", "0.0.0.0", "--port", String(port), "--token", TOKEN, ...extra(port)],
    { timeoutMs: 60_000 },
  );
  onTestFinished(async () => {
    serve.child.kill("SIGTERM");
    await serve.result;
  });
  await waitForOutput(serve.child.stderr, (text) => text.includes("listening on"));
  return port;
}

it("push and pull work through another name once --public-url names it", async () => {
  const port = await serveOnAllAddresses((p) => ["--public-url", `http://uspark.test:${p}`]);
  const apiUrl = `http://uspark.test:${port}`;
  const connection = ["--api-url", apiUrl, "--insecure", "--project-id", "p"];
  const created = await runCli(["projects", "create", "p", "--api-url", apiUrl, "--insecure"], { env: ALIAS_ENV });
  expect(created.code, created.stderr).toBe(0);
  const root = await tempDir();
  await writeFile(path.join(root, "a.txt"), "through the name\n");
  const pushed = await runCli(["push", ...connection, "--root", root], { env: ALIAS_ENV });
  expect(pushed.code, pushed.stderr).toBe(0);
  const copy = path.join(await tempDir(), "copy");
  await mkdir(copy);
  const pulled = await runCli(["pull", ...connection, "--root", copy], { env: ALIAS_ENV });
  expect(pulled.code, pulled.stderr).toBe(0);
  expect(await readFile(path.join(copy, "a.txt"), "utf8")).toBe("through the name\n");
});

it("without --public-url the name is refused, and the CLI says how to serve it", async () => {
  const port = await serveOnAllAddresses(() => []);
  const created = await runCli(["projects", "create", "p", "--api-url", `http://uspark.test:${port}`, "--insecure"], { env: ALIAS_ENV });
  expect(created.code).not.toBe(0);
  expect(created.stderr).toMatch(/421/);
  expect(created.stderr).toMatch(/--public-url/);
});
