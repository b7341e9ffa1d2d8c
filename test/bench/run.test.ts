import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { usePgCluster } from "../kit/pg-cluster.js";

// `npm run bench` is not part of the test suite (it takes minutes); its smoke mode is checked here,
// by `npm run test:bench` (a step of .ci/run of its own), so that the bench cannot rot. Figures
// are not judged here (a loaded CI machine is no stopwatch): only that every part ran, its
// numbers are numbers, and its sanity checks held.

const repo = fileURLToPath(new URL("../..", import.meta.url));
const work = mkdtempSync(path.join(os.tmpdir(), "uspark-bench-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
// The server section's --db runs make their schemas on the worker's cluster, not on one of their own.
const pgCluster = usePgCluster();

interface Figure {
  section: string;
  name: string;
  value: number;
  target: string | null;
  pass: boolean | null;
}

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repo, "bench", "run.mjs"), ...args], { cwd: repo });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm run bench, in smoke mode", () => {
  it("measures every part and writes sane figures to results.json", async () => {
    const out = path.join(work, "results.json");
    // Two rounds: the paired sections take turns.
    const { code, stdout, stderr } = await runBench(["--smoke", "--rounds", "2", "--out", out, "--pg-url", pgCluster().url]);
    expect(stderr).not.toContain("bench:");
    expect(code).toBe(0);

    const results = JSON.parse(readFileSync(out, "utf8")) as {
      mode: string;
      sane: boolean;
      config: { serverClients: number; serverCommits: number };
      figures: Figure[];
      throughput: { seconds: Record<string, number>; detectedFiles: Record<string, number>; expectedFiles: number };
      memory: { peakRssBytes: Record<string, number> };
      startup: { medianMs: Record<string, number> };
      sync: { commits: number; requests: number; bytesUploaded: number; lastResultToAckMs: number };
      server: { name: string; commits: number; perSecond: number }[];
      transcript: { order: string[]; roundRatios: number[] };
    };
    expect(results.mode).toBe("smoke");
    expect(results.sane).toBe(true);
    expect(new Set(results.figures.map((f) => f.section))).toEqual(
      new Set([
        "throughput",
        "memory",
        "startup",
        "sync",
        "fswatch",
        "exit",
        "transfer",
        "transcript",
        "server",
        "depth",
        "scale",
        "web",
        "monorepo",
      ]),
    );
    for (const figure of results.figures) {
      expect(Number.isFinite(figure.value), figure.name).toBe(true);
      if (figure.target !== null && figure.target !== "info" && figure.target !== "reference")
        expect(typeof figure.pass, figure.name).toBe("boolean");
      expect(stdout).toContain(figure.name);
    }
    // Every watch command found exactly the files the generated session changes.
    for (const files of Object.values(results.throughput.detectedFiles)) expect(files).toBe(results.throughput.expectedFiles);
    for (const seconds of Object.values(results.throughput.seconds)) expect(seconds).toBeGreaterThan(0);
    for (const bytes of Object.values(results.memory.peakRssBytes)) expect(bytes).toBeGreaterThan(1024 * 1024);
    for (const ms of Object.values(results.startup.medianMs)) expect(ms).toBeGreaterThan(0);
    // Neither side of the transcript's pair always runs second (a run after --transcript is slower).
    expect(results.transcript.order).toEqual(["off", "on", "on", "off"]);
    expect(results.transcript.roundRatios).toHaveLength(2);
    expect(results.sync.commits).toBeGreaterThan(0);
    expect(results.sync.requests).toBeGreaterThan(results.sync.commits);
    expect(results.sync.bytesUploaded).toBeGreaterThan(0);
    expect(results.sync.lastResultToAckMs).toBeGreaterThan(0);
    // --data, and one and two --db replicas on a throwaway PostgreSQL cluster, every commit answered.
    expect(results.server).toHaveLength(3);
    for (const row of results.server) {
      expect(row.commits, row.name).toBe(results.config.serverClients * results.config.serverCommits);
      expect(row.perSecond, row.name).toBeGreaterThan(0);
    }
    expect(stdout).toMatch(/PASS|FAIL/);
  }, 180_000);
});
