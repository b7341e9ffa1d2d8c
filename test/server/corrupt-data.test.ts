// Defect 20 of issue 15: a damaged data dir, through the built CLI.

import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { sha256, tempDir } from "../kit/server.js";

/** A data dir with a healthy project and one whose log is damaged by `damage`. */
async function dataDirWith(damage: (brokenDir: string) => Promise<void>): Promise<string> {
  const dataDir = await tempDir();
  const record = (version: number) =>
    JSON.stringify({
      version,
      key: `k${version}`,
      at: new Date().toISOString(),
      changes: [{ op: "put", path: `f${version}.txt`, sha256: sha256("x"), size: 1 }],
    }) + "\n";
  for (const project of ["healthy", "broken"]) {
    await mkdir(join(dataDir, "projects", project), { recursive: true });
    await writeFile(join(dataDir, "projects", project, "commits.ndjson"), record(1) + record(2));
  }
  await damage(join(dataDir, "projects", "broken"));
  return dataDir;
}

async function serve(dataDir: string) {
  const { child, result } = await startCli(["serve", "--data", dataDir, "--port", "0"]);
  onTestFinished(() => {
    child.kill("SIGKILL");
  });
  const text = await Promise.race([
    waitForOutput(child.stderr, (seen) => /listening on http:\/\/\S+/.test(seen)),
    result.then((r) => Promise.reject(new Error(`serve exited ${r.code} before listening:\n${r.stderr}`))),
  ]);
  const url = /listening on (http:\/\/\S+)/.exec(text)![1]!;
  return { url, text, child, result };
}

describe("uspark serve on a damaged data dir", () => {
  it.each([
    ["a line that is not JSON in the middle of its log", (dir: string) => writeCorrupt(dir)],
    ["a log cut inside a record, followed by more", (dir: string) => writeTruncated(dir)],
    ["a log that cannot be read", (dir: string) => makeUnreadable(dir)],
  ])("serves the healthy projects and answers a project with %s with a JSON error", async (_name, damage) => {
    const dataDir = await dataDirWith(damage);
    const { url, text, child, result } = await serve(dataDir);
    const warnings = text.split("\n").filter((line) => line.includes("broken"));
    expect(warnings).toEqual([expect.stringMatching(/project broken is unavailable: .*commits\.ndjson/)]);
    expect(text).not.toMatch(/\n\s+at /); // no stack trace

    const healthy = await fetch(`${url}/api/projects/healthy/files`);
    expect(((await healthy.json()) as { version: number }).version).toBe(2);
    const broken = await fetch(`${url}/api/projects/broken/files`);
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({ error: "project_unavailable", message: expect.stringMatching(/broken/) });

    child.kill("SIGTERM");
    expect((await result).code).toBe(0);
  });

  it("takes a stray file among the projects (.DS_Store) for no project: no warning", async () => {
    const dataDir = await dataDirWith(async () => {});
    await writeFile(join(dataDir, "projects", ".DS_Store"), "\x00\x00\x00\x01Bud1");
    const { url, text } = await serve(dataDir);
    expect(text).not.toMatch(/unavailable|warning/);
    expect((await fetch(`${url}/api/projects/healthy/files`)).status).toBe(200);
  });

  it("says in one line that a data dir which is a file cannot be used, and exits 2", async () => {
    const file = join(await tempDir(), "not-a-dir");
    await writeFile(file, "x");
    const { code, stderr } = await runCli(["serve", "--data", file, "--port", "0"]);
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual([expect.stringMatching(/data directory .*not-a-dir cannot be used \(/)]);
  });

  it("says in one line that a data dir below a file cannot be used, and exits 2", async () => {
    const file = join(await tempDir(), "file");
    await writeFile(file, "x");
    const { code, stderr } = await runCli(["serve", "--data", join(file, "data"), "--port", "0"]);
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/cannot be used/);
  });
});

async function writeCorrupt(dir: string): Promise<void> {
  const log = join(dir, "commits.ndjson");
  const [first, second] = (await readFile(log, "utf8")).split("\n");
  await writeFile(log, `${first}\nnot json\n${second}\n`);
}

async function writeTruncated(dir: string): Promise<void> {
  const log = join(dir, "commits.ndjson");
  const [first, second] = (await readFile(log, "utf8")).split("\n");
  await writeFile(log, `${first!.slice(0, 20)}\n${second}\n`);
}

/** Root reads any file, so an unreadable log is a directory in its place. */
async function makeUnreadable(dir: string): Promise<void> {
  await rm(join(dir, "commits.ndjson"));
  await mkdir(join(dir, "commits.ndjson"));
}
