import { randomUUID } from "node:crypto";
import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../../src/server/index.js";
import { spawnServe } from "../kit/serve-child.js";
import { createProject, listFiles, sha256, tempDir, testServer } from "../kit/server.js";

const logOf = (dataDir: string, project = "demo") => join(dataDir, "projects", project, "commits.ndjson");

describe("restart", () => {
  it("rebuilds files, version and Idempotency-Keys from the log", async () => {
    const t = await testServer();
    const one = await t.upload("one");
    const key = randomUUID();
    const first = {
      changes: [
        { op: "put", path: "a.txt", ...one },
        { op: "put", path: "b.txt", ...one },
      ],
    };
    await t.commit(first, key);
    await t.write("c.txt", "three");
    await t.commit({ changes: [{ op: "delete", path: "b.txt" }] });
    const before = await t.files();
    expect(before.version).toBe(3);

    await t.restart();

    expect(await t.files()).toEqual(before);
    const replay = await t.commit(first, key);
    expect(await replay.json()).toMatchObject({ version: 1 });
    expect(await t.files()).toEqual(before);
    expect(await t.write("d.txt", "four")).toBe(4);
  });

  it("keeps blobs across a restart", async () => {
    const t = await testServer();
    const { sha256: hash } = await t.upload("kept");
    await t.restart();
    expect(await (await t.request(`/blobs/${hash}`)).text()).toBe("kept");
  });

  it("writes each commit as one JSON line with its version, key and changes", async () => {
    const t = await testServer();
    const blob = await t.upload("x");
    const key = randomUUID();
    await t.commit({ changes: [{ op: "put", path: "a.txt", ...blob }], source: { agent: "claude" } }, key);
    const lines = (await readFile(logOf(t.dataDir), "utf8")).split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("");
    expect(JSON.parse(lines[0]!)).toMatchObject({
      version: 1,
      key,
      changes: [{ op: "put", path: "a.txt", ...blob }],
      source: { agent: "claude" },
    });
  });

  it("ignores and truncates a torn last log line, then goes on from the last whole commit", async () => {
    const warnings: string[] = [];
    const t = await testServer({ onWarning: (message) => warnings.push(message) });
    await t.write("a.txt", "one");
    await t.write("b.txt", "two");
    const before = await t.files();
    const log = logOf(t.dataDir);
    const whole = await readFile(log);
    await t.close();
    await appendFile(log, `{"version":3,"key":"torn","at":"2025-01-01T00:00:00.000Z","changes":[{"op":"delete","pa`);

    await t.restart();

    expect(await t.files()).toEqual(before);
    expect(await readFile(log)).toEqual(whole);
    expect(warnings).toEqual([expect.stringContaining("incomplete last line")]);
    expect(await t.write("c.txt", "three")).toBe(3);
    await t.restart();
    expect((await t.files()).version).toBe(3);
  });

  it("reports a log that is corrupt before its last line, naming file and line, and refuses only that project", async () => {
    const t = await testServer({ projects: ["demo", "healthy"] });
    await t.write("a.txt", "one");
    await t.write("b.txt", "two", "healthy");
    await t.close();
    await appendFile(logOf(t.dataDir), "not json\n");
    const warnings: string[] = [];
    await t.restart({ onWarning: (line) => warnings.push(line) });
    expect(warnings).toEqual([expect.stringMatching(/^project demo is unavailable: .*commits\.ndjson:2: corrupt/)]);
    expect((await t.files("healthy")).version).toBe(1);
    const res = await t.request("/files");
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: "project_unavailable" });
  });

  it("computes the chain hash of records written before API v1.3, and refuses a record whose chain hash is not its own", async () => {
    const t = await testServer({ projects: ["demo", "healthy"] });
    await t.write("a.txt", "one");
    await t.write("b.txt", "two");
    await t.write("c.txt", "three", "healthy");
    const chainOf = async (project: string) => ((await (await t.request("/files", {}, project)).json()) as { chain: string }).chain;
    const [demo, healthy] = [await chainOf("demo"), await chainOf("healthy")];
    await t.close();
    const strip = async (project: string, edit: (record: { chain?: string }, i: number) => void) => {
      const lines = (await readFile(logOf(t.dataDir, project), "utf8"))
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { chain?: string });
      lines.forEach(edit);
      await writeFile(logOf(t.dataDir, project), lines.map((line) => JSON.stringify(line) + "\n").join(""));
    };
    await strip("demo", (record) => delete record.chain);
    await strip("healthy", (record) => (record.chain = "0".repeat(64)));
    const warnings: string[] = [];
    await t.restart({ onWarning: (w) => warnings.push(w) });
    expect(await chainOf("demo")).toBe(demo);
    expect(healthy).toMatch(/^[0-9a-f]{64}$/);
    expect(warnings).toEqual([
      expect.stringMatching(/^project healthy is unavailable: .*commits\.ndjson:1: corrupt commit log \(the chain hash of version 1/),
    ]);
  });

  it("refuses commits to a project whose log versions do not follow each other, keeping its log as it was", async () => {
    const dataDir = await tempDir();
    const t = await testServer({ dataDir });
    await t.write("a.txt", "one");
    await t.close();
    const line = (await readFile(logOf(dataDir), "utf8")).replace('"version":1', '"version":3');
    await writeFile(logOf(dataDir), line);
    const warnings: string[] = [];
    await t.restart({ onWarning: (w) => warnings.push(w) });
    expect(warnings.join("\n")).toMatch(/expected version 1/);
    // Every request of the damaged project is refused, its uploads too (what it may see is not known).
    const blob = { sha256: sha256("two"), size: 3 };
    expect((await t.request(`/blobs/${blob.sha256}`, { method: "PUT", body: "two" })).status).toBe(500);
    const res = await t.commit({ changes: [{ op: "put", path: "b.txt", ...blob }] });
    expect(res.status).toBe(500);
    expect(await readFile(logOf(dataDir), "utf8")).toBe(line);
  });

  it("removes blob temp files left by a crash", async () => {
    const t = await testServer();
    await t.close();
    // A fan-out directory is made with its first blob: the crash was writing the first one of "ab".
    await mkdir(join(t.dataDir, "blobs", "ab"));
    await writeFile(join(t.dataDir, "blobs", "ab", ".tmp-left-over"), "partial");
    await t.restart();
    expect(await listFiles(join(t.dataDir, "blobs"))).toEqual([]);
    // Its next blob goes into the directory that is there; one in a directory not made yet makes it.
    const blob = await t.upload("after the crash");
    expect(await listFiles(join(t.dataDir, "blobs"))).toEqual([`${blob.sha256.slice(0, 2)}/${blob.sha256.slice(2)}`]);
  });
});

describe("crash", () => {
  it("loses no acknowledged commit when the server is SIGKILLed right after an acknowledgement", async () => {
    const dataDir = await tempDir();
    const project = "crash";
    const acknowledged: { key: string; version: number; path: string; sha256: string; body: string }[] = [];

    // Three lives, each killed at once after its k-th acknowledgement while other commits are in flight.
    for (const [round, killAfter] of [5, 15, 1].entries()) {
      const serve = spawnServe({ dataDir, port: 0, quiet: true });
      const url = await serve.listening();
      if (round === 0) await createProject(url, project);
      const api = `${url}/api/projects/${project}`;
      const perRound = 30;
      const bodies = Array.from({ length: perRound }, (_, i) => `round ${round} file ${i}\n`);
      for (const body of bodies) {
        const res = await fetch(`${api}/blobs/${sha256(body)}`, { method: "PUT", body });
        expect([200, 201]).toContain(res.status);
      }

      let killed = false;
      let acknowledgedThisRound = 0;
      const unexpected: unknown[] = [];
      await Promise.all(
        bodies.map(async (body, i) => {
          const key = randomUUID();
          const path = `round-${round}/file-${i}.txt`;
          const change = { op: "put", path, sha256: sha256(body), size: Buffer.byteLength(body) };
          try {
            const body = JSON.stringify({ changes: [change] });
            const res = await fetch(`${api}/commits`, {
              method: "POST",
              headers: { "idempotency-key": key, "content-type": "application/json" },
              body,
            });
            if (res.status !== 200) throw new Error(`commit answered ${res.status}`);
            const { version } = (await res.json()) as { version: number };
            acknowledged.push({ key, version, path, sha256: change.sha256, body });
            if (++acknowledgedThisRound === killAfter) {
              killed = serve.child.kill("SIGKILL");
            }
          } catch (error) {
            if (!killed) unexpected.push(error);
          }
        }),
      );
      expect(unexpected).toEqual([]);
      expect(killed).toBe(true);
      expect(await serve.exited).toEqual({ code: null, signal: "SIGKILL" });
    }

    const server = await startServer({ dataDir, port: 0 });
    try {
      const api = `${server.url}/api/projects/${project}`;
      const state = (await (await fetch(`${api}/files`)).json()) as {
        version: number;
        files: { path: string; sha256: string }[];
      };
      // Every commit added one new path, so a complete log holds exactly `version` files.
      expect(state.files).toHaveLength(state.version);
      expect(state.version).toBeGreaterThanOrEqual(Math.max(...acknowledged.map((a) => a.version)));
      const byPath = new Map(state.files.map((f) => [f.path, f.sha256]));
      for (const ack of acknowledged) {
        expect(byPath.get(ack.path), ack.path).toBe(ack.sha256);
        const replay = await fetch(`${api}/commits`, { method: "POST", headers: { "idempotency-key": ack.key }, body: ack.body });
        expect(await replay.json()).toMatchObject({ version: ack.version });
      }
    } finally {
      await server.close();
    }
  });
});
