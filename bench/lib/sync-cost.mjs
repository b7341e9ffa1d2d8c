// The sync cost part of bench/run.mjs: an agent session of many edits, played into
// `uspark watch-claude` against the reference server on 127.0.0.1, edits applied to disk as the
// agent would apply them (file first, then its tool_result line).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { randomSource, SESSION_ID } from "./claude-session.mjs";
import { createProject } from "./measure.mjs";

const PROJECT = "bench";
const sha256 = (text) => createHash("sha256").update(text).digest("hex");

/**
 * Plays `edits` edits (Edit mostly, some Write) of `files` files, in bursts of `burst` edits
 * `gapMs` apart with `pauseMs` between bursts (longer than the debounce: the agent thinking), and
 * counts what reaches the server. The server first holds the starting tree (`uspark push`), so
 * that what is measured is the cost of the edits alone.
 */
export async function measureSyncCost({
  repo,
  work,
  edits = 1000,
  files = 100,
  burst = 50,
  gapMs = 2,
  pauseMs = 400,
  debounceMs = 300,
  seed = 3,
  watchArgs = [],
}) {
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const bin = path.join(repo, "bin", "uspark.js");
  const root = path.join(work, "sync-project");
  const r = randomSource(seed);

  const contents = new Map(); // project path -> text
  const sizes = new Map(); // sha256 -> bytes, of every content the agent writes
  const put = (rel, text) => {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, text);
    contents.set(rel, text);
    sizes.set(sha256(text), Buffer.byteLength(text));
  };
  for (let i = 0; i < files; i++) put(`src/file${i}.ts`, r.code(20 + Math.floor(r.rand() * 200)) + "\n");

  const requests = [];
  const commitWaiters = new Set();
  const server = await startServer({
    dataDir: path.join(work, "sync-data"),
    port: 0,
    host: "127.0.0.1",
    onRequest: (event) => {
      const request = { ...event, at: performance.now() };
      requests.push(request);
      if (event.method === "POST" && event.url.endsWith("/commits") && event.status === 200)
        for (const waiter of commitWaiters) waiter(request);
    },
  });
  try {
    await createProject(server.url, PROJECT);
    const connection = ["--project-id", PROJECT, "--api-url", server.url, "--root", root];
    const pushed = await exitOf(
      spawn(process.execPath, [bin, "push", ...connection, "--quiet"], { stdio: ["ignore", "ignore", "inherit"] }),
    );
    if (pushed !== 0) throw new Error(`uspark push of the starting tree exited with ${pushed}`);
    const firstRequest = requests.length;
    const blobsBefore = storedBlobs(path.join(work, "sync-data"));

    const child = spawn(process.execPath, [bin, "watch-claude", ...connection, "--debounce", String(debounceMs), ...watchArgs], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = exitOf(child);
    const send = (event) => child.stdin.write(JSON.stringify(event) + "\n");
    const passedThrough = new Promise((resolve) => child.stdout.once("data", resolve));
    child.stdout.resume();

    let agentBytes = 0; // what a push of every edited file after every edit would send
    let changedBytes = 0; // what the edits themselves changed
    let lastResultAt = 0;
    send({
      type: "system",
      subtype: "init",
      cwd: root,
      session_id: SESSION_ID,
      tools: ["Edit", "Write"],
      mcp_servers: [],
      model: "bench",
      permissionMode: "bypassPermissions",
      apiKeySource: "none",
      uuid: r.uuid(),
    });
    // As an agent does, think a moment after its init event before the first edit.
    await passedThrough;
    await sleep(pauseMs);
    for (let i = 0; i < edits; i++) {
      const rel = `src/file${Math.floor(r.rand() * files)}.ts`;
      const file = path.join(root, rel);
      const id = `toolu_${String(i + 1).padStart(24, "0")}`;
      const before = contents.get(rel);
      let block;
      let after;
      if (r.rand() < 0.85) {
        const lines = before.split("\n");
        const old = lines[Math.floor(r.rand() * (lines.length - 1))];
        const next = `  const e${i} = "${r.text(5)}"; // edit ${i}`;
        after = before.replace(old, next);
        block = { type: "tool_use", id, name: "Edit", input: { file_path: file, old_string: old, new_string: next } };
        changedBytes += Math.max(Buffer.byteLength(old), Buffer.byteLength(next));
      } else {
        after = r.code(20 + Math.floor(r.rand() * 200)) + "\n";
        block = { type: "tool_use", id, name: "Write", input: { file_path: file, content: after } };
        changedBytes += Buffer.byteLength(after);
      }
      send({
        type: "assistant",
        message: { id: `msg_${i}`, type: "message", role: "assistant", model: "bench", content: [block] },
        parent_tool_use_id: null,
        session_id: SESSION_ID,
        uuid: r.uuid(),
      });
      put(rel, after);
      agentBytes += Buffer.byteLength(after);
      send({
        type: "user",
        message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: "ok" }] },
        parent_tool_use_id: null,
        session_id: SESSION_ID,
        uuid: r.uuid(),
      });
      lastResultAt = performance.now();
      if (i === edits - 1) break;
      await sleep((i + 1) % burst === 0 ? pauseMs : gapMs);
    }

    // The last tool_result is out: wait for the commit after which the server holds every file
    // as it is on disk now. stdin stays open meanwhile (its end would flush at once).
    const expected = new Map([...contents].map(([rel, text]) => [rel, sha256(text)]));
    const checks = { count: 0 };
    const ack = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        commitWaiters.delete(check);
        reject(new Error(`the server did not hold the last edits 30 s after the last tool_result; uspark said:\n${stderr.slice(-3000)}`));
      }, 30_000);
      let checking = Promise.resolve();
      function check(commit) {
        checking = checking.then(async () => {
          if (commit.at < lastResultAt) return;
          if (!(await remoteMatches(server.url, expected, checks))) return;
          clearTimeout(timer);
          commitWaiters.delete(check);
          resolve(commit);
        });
      }
      commitWaiters.add(check);
    });
    child.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`uspark watch-claude exited with ${code}:\n${stderr.slice(-3000)}`);

    const session = requests.slice(firstRequest);
    const kinds = { "GET files": 0, "HEAD blob": 0, "PUT blob": 0, "POST blobs": 0, "POST commit": 0, other: 0 };
    for (const request of session) {
      const blob = /\/blobs\/([0-9a-f]{64})$/.exec(request.url)?.[1];
      if (request.method === "GET" && request.url.endsWith("/files")) kinds["GET files"]++;
      else if (request.method === "HEAD" && blob) kinds["HEAD blob"]++;
      else if (request.method === "PUT" && blob) kinds["PUT blob"]++;
      else if (request.method === "POST" && request.url.endsWith("/blobs")) kinds["POST blobs"]++;
      else if (request.method === "POST" && request.url.endsWith("/commits")) kinds["POST commit"]++;
      else kinds.other++;
    }
    // What was uploaded: the blobs the server stored during the session (packs carry several).
    let uploaded = 0;
    let unknownUploads = 0;
    for (const [sha] of storedBlobs(path.join(work, "sync-data"))) {
      if (blobsBefore.has(sha)) continue;
      if (sizes.has(sha)) uploaded += sizes.get(sha);
      else unknownUploads++;
    }
    // The bench's own looks at the remote state are requests too: leave them out.
    kinds["GET files"] -= checks.count;
    return {
      edits,
      files,
      burst,
      gapMs,
      pauseMs,
      debounceMs,
      commits: session.filter((request) => request.method === "POST" && request.url.endsWith("/commits") && request.status === 200).length,
      requests: Object.values(kinds).reduce((a, b) => a + b, 0),
      requestsByKind: kinds,
      bytesUploaded: uploaded,
      unknownUploads,
      bytesChanged: changedBytes,
      bytesWholeFilePerEdit: agentBytes,
      lastResultToAckMs: ack.at - lastResultAt,
      finalFlush: finalFlush(session, lastResultAt, ack),
    };
  } finally {
    await server.close();
  }
}

/**
 * What the last flush was made of: its requests, when the first of them reached the server
 * (after the last tool_result), and how long the server took over them.
 */
function finalFlush(requests, lastResultAt, ack) {
  const flush = requests.filter(
    (request) => request.at > lastResultAt && request.at <= ack.at && !(request.method === "GET" && request.url.endsWith("/files")),
  );
  const started = Math.min(...flush.map((request) => request.at - request.ms));
  return {
    requests: flush.length,
    blobs: flush.filter((request) => request.method === "PUT" || (request.method === "POST" && request.url.endsWith("/blobs"))).length,
    firstRequestAfterResultMs: started - lastResultAt,
    requestsToAckMs: ack.at - started,
    serverMsSum: flush.reduce((sum, request) => sum + request.ms, 0),
  };
}

/** Does the server hold exactly these files with these hashes? */
async function remoteMatches(url, expected, checks) {
  checks.count++;
  const answer = await fetch(`${url}/api/projects/${PROJECT}/files`);
  const { files } = await answer.json();
  if (files.length !== expected.size) return false;
  return files.every((file) => expected.get(file.path) === file.sha256);
}

/** sha256 → size of every blob in the reference server's data dir (blobs/ab/cdef…, and those of packs in blobs/packs/). */
function storedBlobs(dataDir) {
  const blobs = new Map();
  const dir = path.join(dataDir, "blobs");
  if (!existsSync(dir)) return blobs;
  const packs = path.join(dir, "packs");
  // A pack ends with its index (JSON [[sha256, offset, size], ...]) and the index's length in 8 bytes (src/server/file/packs.ts).
  for (const name of existsSync(packs) ? readdirSync(packs).filter((name) => name.endsWith(".pack")) : []) {
    const bytes = readFileSync(path.join(packs, name));
    const length = Number(bytes.readBigUInt64BE(bytes.length - 8));
    for (const [sha256, , size] of JSON.parse(bytes.subarray(bytes.length - 8 - length, bytes.length - 8).toString("utf8")))
      blobs.set(sha256, size);
  }
  for (const fan of readdirSync(dir)) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const rest of readdirSync(path.join(dir, fan))) {
      if (/^[0-9a-f]{62}$/.test(rest)) blobs.set(fan + rest, statSync(path.join(dir, fan, rest)).size);
    }
  }
  return blobs;
}

function exitOf(child) {
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? signal));
  });
}
