import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { runPull } from "../../src/lifecycle/pull.js";
import { captureReporter, sha256 } from "./sync.js";

/** Puts `files` into the project as one commit (deletes for null), straight through the v1 API. */
export async function commitFiles(
  apiUrl: string,
  projectId: string,
  token: string,
  files: Record<string, Buffer | string | null>,
): Promise<number> {
  const base = `${apiUrl}/api/projects/${projectId}`;
  const headers = { authorization: `Bearer ${token}` };
  const changes = [];
  for (const [path, content] of Object.entries(files)) {
    if (content === null) {
      changes.push({ op: "delete", path });
      continue;
    }
    const bytes = Buffer.from(content);
    const put = await fetch(`${base}/blobs/${sha256(bytes)}`, { method: "PUT", headers, body: bytes });
    if (put.status >= 300) throw new Error(`PUT blob for ${path}: ${put.status}`);
    changes.push({ op: "put", path, sha256: sha256(bytes), size: bytes.length });
  }
  const answer = await fetch(`${base}/commits`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", "idempotency-key": randomUUID() },
    body: JSON.stringify({ changes, source: { agent: "test" } }),
  });
  if (answer.status !== 200) throw new Error(`commit: ${answer.status} ${await answer.text()}`);
  return ((await answer.json()) as { version: number }).version;
}

/**
 * Pulls the project into `root` in the test worker (the same runPull `uspark pull` runs), failing
 * unless it exits 0: the local base a test's real subject starts from, without a CLI child and its
 * ~250 ms of CPU. What it reports is not looked at.
 */
export async function pullInWorker(root: string, apiUrl: string, projectId: string, token: string): Promise<void> {
  const report = captureReporter([token]);
  const code = await runPull({ apiUrl, projectId, token, root, requestTimeoutMs: 10_000, concurrency: 4, report: report.reporter });
  if (code !== 0) throw new Error(`pulling ${projectId} into ${root} exited ${code}:\n${report.text()}`);
}

/**
 * A server that lists whatever it is given (paths the real server would refuse) and serves their
 * bytes on both API versions: what a compromised or buggy remote could send.
 */
export async function startHostileServer(files: { path: string; content: Buffer }[]) {
  const blobs = new Map(files.map((f) => [sha256(f.content), f.content]));
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = req.url ?? "";
    if (req.method === "GET" && url.endsWith("/files")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ version: 3, files: files.map((f) => ({ path: f.path, sha256: sha256(f.content), size: f.content.length })) }),
      );
      return;
    }
    if (req.method === "POST" && url.endsWith("/blobs/get")) {
      const form = new FormData();
      for (const sha of (JSON.parse(Buffer.concat(chunks).toString()) as { sha256: string[] }).sha256) {
        form.append(sha, new Blob([blobs.get(sha) ?? Buffer.alloc(0)]), sha);
      }
      const answer = new Response(form);
      res.writeHead(200, { "content-type": answer.headers.get("content-type")! });
      res.end(Buffer.from(await answer.arrayBuffer()));
      return;
    }
    const blob = /\/blobs\/([0-9a-f]{64})$/.exec(url);
    if (req.method === "GET" && blob && blobs.has(blob[1]!)) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(blobs.get(blob[1]!));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "not_found", message: "no" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
