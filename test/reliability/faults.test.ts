// The fault matrix (issue #6, part 2): a 100-edit Claude session (200 in the soak) played through the built CLI
// against the reference server, behind a proxy that injects one kind of fault (or a random mix).
// At the end every touched file's remote content must equal its local content, or the file must
// be journaled and the exit code 1; nothing is lost, and no commit is applied twice.

import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { isCommit, startMemoryRef, v1Only, type Action, type Proxy, type RefServer, type SeenRequest } from "../kit/sync.js";
import {
  answer,
  cliEnv,
  expectNoToken,
  expectTokenOnlyToApi,
  faultProxy,
  newToken,
  SOAK,
  TIMEOUT_MS,
  watchSession,
  workspace,
} from "./harness.js";
import { commitLog, generateSession, jsonRecords, listRemote, PlayControl, readJournalFile, reconcile, rng } from "./session.js";

// 100 edits still touch the session's 30 files and make as many commits and faulted requests as
// 200 did (3-16 commits, up to ~30 faults a case: both are set by the bursts and --max-wait, not
// by the edit count), for a fifth less CPU (the watcher handles every edit).
const EDITS = SOAK ? 200 : 100;
const OUTAGE_MS = SOAK ? 30_000 : 3_000;

interface Row {
  /** Table order (the sessions run concurrently). */
  order: number;
  fault: string;
  edits: number;
  files: number;
  synced: number;
  journaled: number;
  lost: number;
  duplicates: number;
  commits: number;
  injected: number;
  exit: number | null;
  seconds: number;
}
const rows: Row[] = [];

/** One row of the table: a session's reconciled state and the server's commit log. */
function addRow(
  run: { order: number; fault: string; edits: number; injected: number; exit: number | null; started: number },
  state: { touched: number; synced: number; journaled: number; lost: unknown[] },
  log: { repeatedKeys: number; noOps: number; commits: number },
): void {
  rows.push({
    order: run.order,
    fault: run.fault,
    edits: run.edits,
    files: state.touched,
    synced: state.synced,
    journaled: state.journaled,
    lost: state.lost.length,
    duplicates: log.repeatedKeys + log.noOps,
    commits: log.commits,
    injected: run.injected,
    exit: run.exit,
    seconds: (Date.now() - run.started) / 1000,
  });
}

afterAll(() => {
  if (rows.length === 0) return;
  const header = "| fault | edits | files | synced | journaled | lost | duplicate commits | commits | faults injected | exit | s |";
  const lines = [header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"];
  for (const r of [...rows].sort((a, b) => a.order - b.order)) {
    lines.push(
      `| ${r.fault} | ${r.edits} | ${r.files} | ${r.synced} | ${r.journaled} | ${r.lost} | ${r.duplicates} | ${r.commits} | ${r.injected} | ${r.exit} | ${r.seconds.toFixed(1)} |`,
    );
  }
  const table = lines.join("\n");
  const file = path.join(tmpdir(), `uspark-fault-table${SOAK ? "-soak" : ""}.md`);
  writeFileSync(file, table + "\n");
  console.log(`\nFault matrix (${EDITS}-edit sessions; also written to ${file}):\n\n${table}\n`);
});

interface FaultCase {
  fault: string;
  seed: number;
  /** Per-request fault, given a seeded random number generator. */
  rule?: (random: () => number) => (req: SeenRequest) => Action | undefined;
  /** Outage: the proxy goes down `atMs` into the session for `forMs` (Infinity: until the watcher exits). */
  outage?: { atMs: number; forMs: number };
  requestTimeoutMs?: number;
  flushTimeoutMs?: number;
  durationMs?: number;
}

/** Answers that count as injected faults (everything but a forward). */
const injectedKinds = new Set(["answer", "reset", "stall", "drop"]);

const retryAfter = (status: 429 | 503) => answer(status, { "retry-after": "1" });

/** The fault on a share of the requests, and always on the second (v1.1 sessions make few requests). */
function atLeastOnce(random: () => number, share: number, fault: () => Action): (req: SeenRequest) => Action | undefined {
  let n = 0;
  return () => (random() < share || ++n === 2 ? fault() : undefined);
}

const CASES: FaultCase[] = [
  { fault: "none", seed: 1 },
  { fault: "500", seed: 2, rule: (r) => () => (r() < 0.3 ? answer(500) : undefined) },
  { fault: "503 + Retry-After: 1", seed: 3, rule: (r) => atLeastOnce(r, 0.08, () => retryAfter(503)) },
  { fault: "429 + Retry-After: 1", seed: 4, rule: (r) => atLeastOnce(r, 0.08, () => retryAfter(429)) },
  { fault: "connection reset", seed: 5, rule: (r) => () => (r() < 0.25 ? { kind: "reset" } : undefined) },
  {
    fault: "stall past --request-timeout",
    seed: 6,
    requestTimeoutMs: 400,
    // Half of the stalls come after the server did the work (a commit applied, its answer never sent).
    rule: (r) => () => (r() < 0.08 ? (r() < 0.5 ? { kind: "stall" } : { kind: "drop", then: "stall" }) : undefined),
  },
  {
    fault: "answer dropped after commit",
    seed: 7,
    rule: (r) => {
      let commits = 0;
      return (req) => {
        // The first commit's answer is always lost: the replay by Idempotency-Key is what is tested.
        if (isCommit(req) && ++commits === 1) return { kind: "drop", then: "reset" };
        const p = isCommit(req) ? 0.5 : 0.15;
        return r() < p ? { kind: "drop", then: r() < 0.3 ? "half" : "reset" } : undefined;
      };
    },
  },
  {
    fault: `down ${OUTAGE_MS / 1000} s, then back`,
    seed: 8,
    outage: { atMs: 800, forMs: OUTAGE_MS },
    durationMs: OUTAGE_MS + 2500,
  },
  { fault: "random mix (all of the above)", seed: 9, ...randomMix() },
  // The soak plays more mixes, each its own seed.
  ...(SOAK ? Array.from({ length: 10 }, (_, i) => ({ fault: `random mix, seed ${100 + i}`, seed: 100 + i, ...randomMix() })) : []),
];

/** Every kind of fault at random on a third of the requests, and a short outage half-way. */
function randomMix(): Omit<FaultCase, "fault" | "seed"> {
  return {
    requestTimeoutMs: 400,
    outage: { atMs: 1200, forMs: 1500 },
    durationMs: 4000,
    rule: (r) => (req) => {
      if (r() >= 0.35) return undefined;
      const kinds: (() => Action)[] = [
        () => answer(500),
        () => answer(502),
        () => (r() < 0.15 ? retryAfter(503) : answer(503, { "retry-after": "0" })),
        () => (r() < 0.15 ? retryAfter(429) : answer(429, { "retry-after": "0" })),
        () => ({ kind: "reset" }),
        () => (r() < 0.3 ? { kind: "stall" } : { kind: "reset" }),
        () => ({ kind: "drop", then: r() < 0.2 ? "stall" : r() < 0.5 ? "half" : "reset" }),
        () => (isCommit(req) ? { kind: "drop" } : answer(500)),
      ];
      return kinds[Math.floor(r() * kinds.length)]!();
    },
  };
}

/** The API the server speaks: v1.1 (the reference server), or v1 (the proxy answers 404 on the v1.1 routes). */
type Api = "v1.1" | "v1";
const APIS: Api[] = ["v1.1", "v1"];

const projectOf = (c: Pick<FaultCase, "seed">, api: Api) => `faults-${api}-${c.seed}`;
const DOWN_AT_THE_END_SEED = 10;

/**
 * One reference server for the whole matrix, a project per session: the faults are the proxies'
 * (one a session), and a server per session would only repeat its start and stop. Its
 * durability is not what this matrix checks: its data on tmpfs, where its fsyncs cost nothing
 * (the project root the watcher watches stays on the disk).
 */
const token = newToken();
let server: RefServer;
beforeAll(async () => {
  const seeds = [...CASES.map((c) => c.seed), DOWN_AT_THE_END_SEED];
  server = await startMemoryRef(token, { projects: APIS.flatMap((api) => seeds.map((seed) => projectOf({ seed }, api))) });
});
afterAll(() => server?.stop());

async function runCase(c: FaultCase, api: Api) {
  const started = Date.now();
  const ws = await workspace("uspark-faults-");
  const projectId = projectOf(c, api);
  let proxy: Proxy | undefined;
  try {
    const random = rng(c.seed * 7919);
    const rule = c.rule?.(random);
    let injected = 0;
    proxy = await faultProxy(server.url, (req) => {
      const asV1 = api === "v1" ? v1Only(req) : undefined;
      if (asV1) return asV1;
      const action = rule?.(req);
      if (action && injectedKinds.has(action.kind)) injected++;
      return action;
    });
    const plan = generateSession(ws.root, c.seed, { edits: EDITS, durationMs: c.durationMs ?? 3000 });

    let outageStarted = false;
    let outageOver: Promise<void> | undefined;
    const p = proxy;
    const run = await watchSession({
      root: ws.root,
      home: ws.home,
      token,
      apiUrl: proxy.url,
      projectId,
      plan,
      extraArgs: ["--request-timeout", String(c.requestTimeoutMs ?? 2000), "--flush-timeout", String(c.flushTimeoutMs ?? 60_000)],
      control: new PlayControl(async (_index, elapsed) => {
        if (!c.outage || outageStarted || elapsed < c.outage.atMs) return;
        outageStarted = true;
        await p.down();
        if (Number.isFinite(c.outage.forMs))
          outageOver = new Promise<void>((resolve, reject) => setTimeout(() => void p.up().then(resolve, reject), c.outage!.forMs));
      }),
      timeoutMs: 120_000 + (SOAK ? OUTAGE_MS * 3 : 0),
    });
    await outageOver;
    if (c.outage) expect(outageStarted, "the outage happened during the session").toBe(true);
    return { run, plan, proxy, ws, projectId, injected: () => injected, started };
  } catch (error) {
    await proxy?.close();
    await ws.cleanup();
    throw error;
  }
}

// The sessions spend most of their time waiting (pauses, backoff, timeouts, the outage): they run
// a few at a time. Each has its own project, proxy, ports, temp dir and watcher process.
// Every case runs on both API versions: v1.1 (blob packs) and v1 (one request per blob, after
// the client's fallback), with the same guarantees.
describe.concurrent.each(APIS)(
  `fault matrix (API %s): ${EDITS}-edit sessions through a fault-injecting proxy`,
  { timeout: TIMEOUT_MS },
  (api) => {
    for (const [order, c] of CASES.entries()) {
      it(`${c.fault}: nothing lost, no commit applied twice`, async () => {
        const { run, plan, proxy, ws, projectId, injected, started } = await runCase(c, api);
        try {
          const { result, input } = run;
          // Passthrough is untouched by whatever the network does.
          expect(result.stdout.equals(input)).toBe(true);
          expect([0, 1]).toContain(result.code);

          const remote = await listRemote(server.url, projectId, token);
          const journal = await readJournalFile(ws.root);
          const state = reconcile(ws.root, plan.touched, remote, journal.entries);
          const log = await commitLog(server.dataDir, projectId);
          const records = jsonRecords(result.stderr);
          const acknowledged = records.filter((r) => r.event === "commit").length;
          // The v1 fallback is said once, and only to a v1 server.
          expect(records.filter((r) => r.event === "api-v1").length).toBe(api === "v1" ? 1 : 0);

          expect(state.lost, `lost edits (seed ${c.seed})`).toEqual([]);
          // Exit 0 only when nothing is journaled; whatever is not synced is journaled, with exit 1.
          expect(
            result.code,
            result.stderr
              .split("\n")
              .filter((l) => /"level":"(error|warn)"/.test(l))
              .join("\n"),
          ).toBe(journal.entries.length > 0 ? 1 : 0);
          expect(log.repeatedKeys + log.noOps, "duplicate commits").toBe(0);
          if (result.code === 0)
            expect(log.commits, "commits in the server's log = commits the watcher saw acknowledged").toBe(acknowledged);
          if (c.rule) expect(injected()).toBeGreaterThan(0);
          // A commit whose answer was dropped was retried with its key and answered from the log.
          const dropped = proxy.seen.filter((req) => isCommit(req) && !proxy.delivered.some((d) => d.n === req.n));
          const replayed = proxy.delivered.filter((d) => d.headers["idempotent-replayed"] === "true");
          if (c.fault.startsWith("answer dropped")) expect(dropped.length > 0 && replayed.length > 0).toBe(true);

          // Retry-After was honoured (a wait cut short by the end of input is the documented exception).
          for (const told of proxy.delivered.filter((d) => d.headers["retry-after"] === "1")) {
            const retried = proxy.seen.find(
              (req) =>
                req.n > told.n &&
                req.method === told.method &&
                req.url === told.url &&
                req.headers["idempotency-key"] === (told.idempotencyKey ?? req.headers["idempotency-key"]),
            );
            if (retried && retried.at < run.endedAt)
              expect(retried.at - told.at, `${told.method} ${told.url} retried too early`).toBeGreaterThanOrEqual(980);
          }

          expectTokenOnlyToApi(proxy, token);
          expectNoToken(token, { stdout: result.stdout, stderr: result.stderr, journal: journal.text });

          addRow(
            {
              order: order + (api === "v1" ? 1000 : 0),
              fault: `${api}: ${c.fault}`,
              edits: plan.edits,
              injected: injected() + (c.outage ? 1 : 0),
              exit: result.code,
              started,
            },
            state,
            log,
          );
        } finally {
          await proxy.close();
          await ws.cleanup();
        }
      });
    }

    it("down until the watcher gives up: journaled, exit 1; then push --pending syncs the rest", async () => {
      const c: FaultCase = {
        fault: "down at the end (flush timeout)",
        seed: DOWN_AT_THE_END_SEED,
        outage: { atMs: 1500, forMs: Infinity },
        flushTimeoutMs: 1000,
        requestTimeoutMs: 500,
      };
      const { run, plan, proxy, ws, projectId, started } = await runCase(c, api);
      try {
        const { result, input } = run;
        expect(result.stdout.equals(input)).toBe(true);
        const journal = await readJournalFile(ws.root);
        const state = reconcile(ws.root, plan.touched, await listRemote(server.url, projectId, token), journal.entries);
        expect(state.lost, "lost edits").toEqual([]);
        expect(state.journaled).toBeGreaterThan(0);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain("uspark push --pending");
        const log = await commitLog(server.dataDir, projectId);
        expectNoToken(token, { stdout: result.stdout, stderr: result.stderr, journal: journal.text });
        addRow(
          {
            order: 100 + (api === "v1" ? 1000 : 0),
            fault: `${api}: ${c.fault}`,
            edits: plan.edits,
            injected: 1,
            exit: result.code,
            started,
          },
          state,
          log,
        );

        // The server is back: the journal is pushed and emptied.
        const pushStarted = Date.now();
        await proxy.up();
        const push = await runCli(
          ["push", "--pending", "--project-id", projectId, "--api-url", proxy.url, "--root", ws.root, "--log-format", "json", "--verbose"],
          {
            cwd: ws.root,
            env: cliEnv(ws.home, token),
            timeoutMs: 60_000,
          },
        );
        expect(push.code, push.stderr).toBe(0);
        const after = reconcile(
          ws.root,
          plan.touched,
          await listRemote(server.url, projectId, token),
          (await readJournalFile(ws.root)).entries,
        );
        expect(after.lost).toEqual([]);
        expect(after.journaled).toBe(0);
        expect(after.synced).toBe(after.touched);
        const logAfter = await commitLog(server.dataDir, projectId);
        expect(logAfter.repeatedKeys + logAfter.noOps).toBe(0);
        expectNoToken(token, { stdout: push.stdout, stderr: push.stderr });
        expectTokenOnlyToApi(proxy, token);
        addRow(
          {
            order: 101 + (api === "v1" ? 1000 : 0),
            fault: `${api}: … then \`uspark push --pending\``,
            edits: plan.edits,
            injected: 0,
            exit: push.code,
            started: pushStarted,
          },
          after,
          logAfter,
        );
      } finally {
        await proxy.close();
        await ws.cleanup();
      }
    });
  },
);
