import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolvePaths } from "../../src/lifecycle/scope.js";
import { Reporter } from "../../src/report/reporter.js";

let base: string;
let root: string;
let said: string[];
const report = () => new Reporter({ listener: (record) => (said.push(record.message), true) });

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-scope-")));
  root = path.join(base, "project");
  mkdirSync(root);
  said = [];
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe("resolvePaths", () => {
  it("takes a relative path from the current directory, as git does", () => {
    const fromRoot = resolvePaths({ paths: ["src/a.ts"], root, cwd: root, report: report() });
    expect(fromRoot !== "usage" && fromRoot?.given).toEqual(["src/a.ts"]);
    const fromAbove = resolvePaths({ paths: ["project/src/a.ts"], root, cwd: base, report: report() });
    expect(fromAbove !== "usage" && fromAbove?.given).toEqual(["src/a.ts"]);
  });

  it("says, when the current directory is outside the root, which path would name the file meant from the root", () => {
    expect(resolvePaths({ paths: ["src/a.ts"], root, cwd: base, report: report() })).toBe("usage");
    expect(said).toEqual([
      `refused src/a.ts: outside the project root ${root} (a path is taken from the current directory, ${base}: project/src/a.ts names src/a.ts of the root)`,
    ]);
  });

  it("says no more than the refusal when the current directory is inside the root", () => {
    expect(resolvePaths({ paths: ["../elsewhere.txt"], root, cwd: root, report: report() })).toBe("usage");
    expect(said).toEqual([`refused ../elsewhere.txt: outside the project root ${root}`]);
  });
});
