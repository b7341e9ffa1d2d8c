// `uspark serve` flags through the built CLI (the server itself: test/server/).

import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";

it("--max-blob-bytes sets the largest file the server accepts: one byte more is 413, the limit itself is stored", async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "uspark-cli-serve-"));
  const serve = await startCli(["serve", "--data", dataDir, "--port", "0", "--max-blob-bytes", "1000"]);
  try {
    const line = await waitForOutput(serve.child.stderr, (text) => text.includes("listening on"));
    const url = /listening on (\S+)/.exec(line)![1]!;
    expect((await fetch(`${url}/api/projects`, { method: "POST", body: JSON.stringify({ id: "p" }) })).status).toBe(201);
    const put = (bytes: Buffer) =>
      fetch(`${url}/api/projects/p/blobs/${createHash("sha256").update(bytes).digest("hex")}`, { method: "PUT", body: bytes });
    expect((await put(Buffer.alloc(1001, 1))).status).toBe(413);
    expect((await put(Buffer.alloc(1000, 1))).status).toBe(201);
  } finally {
    serve.child.kill("SIGTERM");
    await serve.result;
    await rm(dataDir, { recursive: true, force: true });
  }
});
