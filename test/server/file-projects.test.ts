// The file store's project directories (src/server/file/projects.ts): data dirs made before v1.2
// stay readable, ids that are not plain names get safe directory names.

import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256, tempDir, testServer } from "../kit/server.js";

const record = (version: number, path: string) =>
  JSON.stringify({
    version,
    key: `k${version}`,
    at: `2024-05-0${version}T00:00:00.000Z`,
    changes: [{ op: "put", path, sha256: sha256("x"), size: 1 }],
  }) + "\n";

async function projectsOf(url: string): Promise<unknown> {
  return ((await (await fetch(`${url}/api/projects`)).json()) as { projects: unknown }).projects;
}

describe("a data dir made before v1.2", () => {
  it("serves every project directory, with or without commits, as a project that exists", async () => {
    const dataDir = await tempDir();
    await mkdir(join(dataDir, "projects", "logged"), { recursive: true });
    await writeFile(join(dataDir, "projects", "logged", "commits.ndjson"), record(1, "a.txt") + record(2, "b.txt"));
    await mkdir(join(dataDir, "projects", "talk-only", "sessions"), { recursive: true });
    await writeFile(join(dataDir, "projects", "talk-only", "sessions", "s-1.ndjson"), "{}\n");
    const t = await testServer({ dataDir, projects: [] });

    expect(await projectsOf(t.url)).toEqual([
      { id: "logged", version: 2, files: 2, updated: "2024-05-02T00:00:00.000Z" },
      { id: "talk-only", version: 0, files: 0, updated: expect.any(String) },
    ]);
    expect((await t.files("logged")).files.map((f) => f.path)).toEqual(["a.txt", "b.txt"]);
    expect(await (await t.request("/sessions", {}, "talk-only")).json()).toEqual({
      sessions: [{ id: "s-1", length: 3, updated: expect.any(String) }],
    });
    expect((await t.request("/files", {}, "talk-only")).status).toBe(200);
    const exists = await fetch(`${t.url}/api/projects`, { method: "POST", body: JSON.stringify({ id: "logged" }) });
    expect(exists.status).toBe(409);
  });
});

describe("project directories", () => {
  it("names a plain id's directory after it, and any other id's after its SHA-256, keeping the id in project.json", async () => {
    const t = await testServer({ projects: ["plain-1.0", "Ünïcode id: 1"] });
    const names = (await readdir(join(t.dataDir, "projects"))).sort();
    const encoded = `~${createHash("sha256").update("Ünïcode id: 1").digest("hex")}`;
    expect(names).toEqual(["plain-1.0", encoded].sort());
    expect(JSON.parse(await readFile(join(t.dataDir, "projects", encoded, "project.json"), "utf8"))).toEqual({
      id: "Ünïcode id: 1",
      created: expect.any(String),
    });
  });

  it("removes what a creation cut short left, and skips with a warning an encoded directory that names no project", async () => {
    const t = await testServer({ projects: [] });
    await t.close();
    await mkdir(join(t.dataDir, "projects", "~tmp-4f2c"), { recursive: true });
    await mkdir(join(t.dataDir, "projects", `~${"ab".repeat(32)}`), { recursive: true });
    const warnings: string[] = [];
    await t.restart({ onWarning: (warning) => warnings.push(warning) });
    expect(await readdir(join(t.dataDir, "projects"))).toEqual([`~${"ab".repeat(32)}`]);
    expect(warnings).toEqual([expect.stringMatching(/~abab.*skipped, its project\.json does not name the project/)]);
    expect(await projectsOf(t.url)).toEqual([]);
  });
});
