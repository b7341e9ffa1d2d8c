// Crash safety (issue #6, part 3): the reference server SIGKILLed at random moments of a session
// and restarted loses no acknowledged commit, and the watcher completes the sync; the watcher
// SIGTERMed mid-batch leaves every change synced or journaled, and `uspark push --pending`
// completes the rest.

import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { spawnServe, type ServeChild } from "../kit/serve-child.js";
import { createProject } from "../kit/server.js";
import { isBlobUpload, isCommit, remoteFiles, startMemoryRef, tempDir, eventually, type Proxy } from "../kit/sync.js";
import { cliEnv, expectNoToken, expectTokenOnlyToApi, faultProxy, newToken, TIMEOUT_MS, watchSession, workspace } from "./harness.js";
import { commitLog, generateSession, jsonRecords, listRemote, PlayControl, readJournalFile, reconcile, rng, sha256 } from "./session.js";

/** `uspark serve` as a child process over one data dir, killed with SIGKILL and started again. */
async function crashableServer(token: string) {
  const { dir: dataDir, cleanup } = await tempDir("uspark-crash-data-");
  let current: ServeChild = spawnServe({ dataDir, port: 0, host: "127.0.0.1", token, quiet: true });
  let url = await current.listening();
  await createProject(url, "crash", { authorization: `Bearer ${token}` });
  let proxy: Proxy | undefined;
  let chain: Promise<void> = Promise.resolve();
  const server = {
    dataDir,
    kills: 0,
    get url() {
      return url;
    },
    attach(p: Proxy) {
      proxy = p;
    },
    /** SIGKILL, then start again over the same data (kills are serialized). */
    crash(): Promise<void> {
      chain = chain.then(async () => {
        current.child.kill("SIGKILL");
        await current.exited;
        server.kills++;
        current = spawnServe({ dataDir, port: 0, host: "127.0.0.1", token, quiet: true });
        url = await current.listening();
        if (proxy) proxy.upstream = url;
      });
      return chain;
    },
    settled: () => chain,
    async stop() {
      await chain;
      current.child.kill("SIGKILL");
      await current.exited;
      await cleanup();
    },
  };
  return server;
}

/** The commits the proxy saw acknowledged to the watcher: Idempotency-Key → version. */
function acknowledgedCommits(proxy: Proxy): Map<string, number> {
  const acked = new Map<string, number>();
  for (const d of proxy.delivered) {
    if (!isCommit(d) || d.status !== 200 || !d.idempotencyKey) continue;
    acked.set(d.idempotencyKey, (JSON.parse(d.body) as { version: number }).version);
  }
  return acked;
}

describe("crash safety", { timeout: TIMEOUT_MS }, () => {
  it("server SIGKILLed at random moments (some in the middle of a commit): no acknowledged commit is lost, the watcher completes the sync", async () => {
    const token = newToken();
    const ws = await workspace("uspark-crash-");
    const server = await crashableServer(token);
    const random = rng(4242);
    let posts = 0;
    let puts = 0;
    let duringCommit = 0;
    const proxy = await faultProxy(server.url, (req) => {
      // Kills timed to land while a commit (or an upload) is being written and fsynced.
      if (isCommit(req) && [2, 5, 9].includes(++posts)) {
        duringCommit++;
        setTimeout(() => void server.crash(), Math.floor(random() * 4));
      }
      if (isBlobUpload(req) && ++puts === 2) setTimeout(() => void server.crash(), 1);
      return undefined;
    });
    server.attach(proxy);
    try {
      const plan = generateSession(ws.root, 77, { edits: 200, durationMs: 3000 });
      const run = await watchSession({
        root: ws.root,
        home: ws.home,
        token,
        apiUrl: proxy.url,
        projectId: "crash",
        plan,
        extraArgs: ["--request-timeout", "2000", "--flush-timeout", "60000"],
        // And kills at random moments of the session.
        alongside: async () => {
          for (const after of [300 + random() * 1000, 300 + random() * 1200]) {
            await sleep(after);
            await server.crash();
          }
        },
      });
      await server.settled();
      const { result } = run;
      expect(result.stdout.equals(run.input)).toBe(true);
      expect(
        result.code,
        result.stderr
          .split("\n")
          .filter((l) => /"level":"(error|warn)"/.test(l))
          .join("\n"),
      ).toBe(0);
      // Two at random moments, at least one in the middle of a commit (more if the session had the requests).
      expect(server.kills).toBeGreaterThanOrEqual(3);
      expect(duringCommit).toBeGreaterThanOrEqual(1);

      // One more crash: what follows is rebuilt from disk alone.
      await server.crash();
      const acked = acknowledgedCommits(proxy);
      const log = await commitLog(server.dataDir, "crash");
      expect(acked.size).toBeGreaterThan(0);
      for (const [key, version] of acked) expect(log.byKey.get(key), `acknowledged commit v${version} (${key}) survived`).toBe(version);
      expect(log.repeatedKeys + log.noOps, "duplicate commits").toBe(0);
      expect(log.commits).toBe(jsonRecords(result.stderr).filter((r) => r.event === "commit").length);

      const state = reconcile(
        ws.root,
        plan.touched,
        await listRemote(server.url, "crash", token),
        (await readJournalFile(ws.root)).entries,
      );
      expect(state.lost).toEqual([]);
      expect(state.synced).toBe(state.touched);
      // And the blobs behind them survived too: every listed file's content is served intact.
      for (const [file, bytes] of await remoteFiles(server.url, "crash", token))
        expect(sha256(bytes), file).toBe(sha256(readFileSync(path.join(ws.root, file))));
      expectTokenOnlyToApi(proxy, token);
      expectNoToken(token, { stdout: result.stdout, stderr: result.stderr });
      console.log(
        `server crash: ${server.kills} SIGKILLs (${duringCommit} timed to a commit in flight, 1 after the session), ${acked.size} acknowledged commits all in the log, ${state.synced}/${state.touched} files synced, exit ${result.code}`,
      );
    } finally {
      await proxy.close();
      await server.stop();
      await ws.cleanup();
    }
  });

  describe("watcher SIGTERMed in the middle of a batch", () => {
    /**
     * Plays a session until the watcher has a commit in flight (held by the proxy), stops the
     * agent there, and signals the watcher. `healthy`: the held commit then goes through.
     */
    async function sigtermMidBatch(mode: "healthy" | "server stalls" | "second signal") {
      const token = newToken();
      const ws = await workspace("uspark-sigterm-");
      // The server is never killed here: the reference server in this process, not a child (a
      // `uspark serve` started costs some 0.3 s of CPU).
      const server = await startMemoryRef(token, { projects: ["sigterm"] });
      let posts = 0;
      let stalling = false;
      let control!: PlayControl;
      let child!: Parameters<NonNullable<Parameters<typeof watchSession>[0]["onStart"]>>[0];
      let signalled: Promise<void> | undefined;
      let stderr = "";
      const signal = async () => {
        await control.stop();
        if (mode === "second signal") {
          // Abort journals what the watcher knows: let it see every change made so far first.
          const detected = () => [...touchedSoFar()].every((rel) => stderr.includes(`"event":"change","message":"detected ${rel} `));
          await eventually(detected, 10_000, "the watcher to detect every change made so far");
        }
        child.kill("SIGTERM");
        await eventually(() => stderr.includes('"event":"signal"'), 10_000, "the watcher to take the signal");
        if (mode === "second signal") child.kill("SIGTERM");
      };
      let touchedSoFar: () => Set<string> = () => new Set();
      const proxy = await faultProxy(server.url, (req) => {
        if (stalling) return { kind: "stall" };
        if (!isCommit(req) || ++posts !== 4) return undefined;
        if (mode === "healthy") return { kind: "forward-after", before: () => (signalled = signal()) };
        stalling = true;
        signalled = signal();
        return { kind: "stall" };
      });
      try {
        const plan = generateSession(ws.root, mode.length, { edits: 200, durationMs: 3000 });
        const steps = new Set<string>();
        control = new PlayControl((index) => {
          const step = plan.steps[index - 1];
          if (step?.touches) steps.add(step.touches);
        });
        touchedSoFar = () => steps;
        const run = await watchSession({
          root: ws.root,
          home: ws.home,
          token,
          apiUrl: proxy.url,
          projectId: "sigterm",
          plan,
          control,
          onStart: (c) => {
            child = c;
            c.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
          },
          extraArgs: ["--request-timeout", "500", "--flush-timeout", mode === "healthy" ? "30000" : "1500"],
        });
        await signalled;
        const { result } = run;
        expect(signalled, "the watcher was signalled mid-batch").toBeDefined();
        // What reached stdout is exactly what was written before the signal, or a prefix of it.
        expect(run.input.subarray(0, result.stdout.length).equals(result.stdout)).toBe(true);
        expect(result.code).toBe(mode === "healthy" ? 0 : mode === "server stalls" ? 1 : 143);

        const journal = await readJournalFile(ws.root);
        const remote = await listRemote(server.url, "sigterm", token);
        const state = reconcile(ws.root, run.touched, remote, journal.entries);
        expect(state.lost, "every change is synced or journaled").toEqual([]);
        if (mode !== "healthy") expect(state.journaled).toBeGreaterThan(0);
        else expect(state.synced).toBe(state.touched);
        expectNoToken(token, { stdout: result.stdout, stderr: result.stderr, journal: journal.text });

        let after = state;
        if (mode !== "healthy") {
          stalling = false;
          const push = await runCli(
            ["push", "--pending", "--project-id", "sigterm", "--api-url", proxy.url, "--root", ws.root, "--log-format", "json"],
            {
              cwd: ws.root,
              env: cliEnv(ws.home, token),
              timeoutMs: 60_000,
            },
          );
          expect(push.code, push.stderr).toBe(0);
          expectNoToken(token, { stdout: push.stdout, stderr: push.stderr });
          const left = await readJournalFile(ws.root);
          expect(left.entries).toEqual([]);
          after = reconcile(ws.root, run.touched, await listRemote(server.url, "sigterm", token), left.entries);
          expect(after.lost).toEqual([]);
          expect(after.synced).toBe(after.touched);
        }
        const log = await commitLog(server.dataDir, "sigterm");
        expect(log.repeatedKeys + log.noOps, "duplicate commits").toBe(0);
        expectTokenOnlyToApi(proxy, token);
        console.log(
          `watcher SIGTERM (${mode}): exit ${result.code}, ${state.touched} files touched, ${state.synced} synced + ${state.journaled} journaled, lost ${state.lost.length}` +
            (mode === "healthy" ? "" : `; after push --pending: ${after.synced} synced, lost ${after.lost.length}`),
        );
      } finally {
        await proxy.close();
        await server.stop();
        await ws.cleanup();
      }
    }

    it("with a healthy server: the flush completes, everything synced, exit 0", () => sigtermMidBatch("healthy"));
    it("with a server that stalls: synced or journaled within --flush-timeout, exit 1; push --pending completes the rest", () =>
      sigtermMidBatch("server stalls"));
    it("a second SIGTERM: journals at once, exit 143; push --pending completes the rest", () => sigtermMidBatch("second signal"));
  });
});
