import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Reporter } from "../../src/report.js";
import { baseIn, loadBase, parseState, saveBase, statePath, withBase } from "../../src/sync/base.js";

const API = "http://127.0.0.1:4400";

describe("state file contents", () => {
  it("keeps other projects when one project's base is replaced", () => {
    const one = withBase(undefined, API, "a", { version: 3, files: new Map([["x", "1"]]) });
    const two = withBase(one, `${API}/`, "b", { version: 5, files: new Map([["y", "2"]]) });
    const three = withBase(two, API, "a", { version: 4, files: new Map([["z", "3"]]) });
    expect(baseIn(three, API, "a")).toEqual({ version: 4, files: new Map([["z", "3"]]) });
    expect(baseIn(three, `${API}/`, "b")).toEqual({ version: 5, files: new Map([["y", "2"]]) });
    expect(baseIn(three, "http://other:1", "a")).toBeUndefined();
  });

  it.each([
    ["not JSON", "{"],
    ["an array", "[]"],
    ["a foreign format", JSON.stringify({ format: 99, projects: [] })],
    ["a project without files", JSON.stringify({ format: 1, projects: [{ apiUrl: API, projectId: "a", version: 1 }] })],
    ["a hash that is not a string", JSON.stringify({ format: 1, projects: [{ apiUrl: API, projectId: "a", version: 1, files: { x: 1 } }] })],
  ])("rejects %s", (_, text) => {
    expect(() => parseState(text)).toThrow();
  });
});

describe("state file on disk", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "uspark-base-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("round-trips a base", async () => {
    await saveBase(root, API, "p", { version: 7, files: new Map([["src/a.ts", "ab".repeat(32)]]) });
    expect(await loadBase(root, API, "p")).toEqual({ version: 7, files: new Map([["src/a.ts", "ab".repeat(32)]]) });
  });

  it("reads a corrupt state file as no base, with one warning", async () => {
    await mkdir(path.join(root, ".uspark"));
    await writeFile(statePath(root), "garbage");
    const lines: string[] = [];
    const report = new Reporter({ stream: { write: (t: string) => lines.push(t) } });
    expect(await loadBase(root, API, "p", report)).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/state\.json is not a state file uspark can use.*starting without a base/);
  });
});
