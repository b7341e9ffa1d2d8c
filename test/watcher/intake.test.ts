import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FileChange } from "../../src/agents/types.js";
import { createPathPolicy } from "../../src/paths/paths.js";
import { Reporter } from "../../src/report/reporter.js";
import { ChangeIntake } from "../../src/watcher/intake.js";

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** The real path policy over a real root holding src/a.ts and sub/src/a.ts, its decisions counted. */
function intakeOverRoot() {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-intake-")));
  for (const dir of ["src", "sub/src"]) {
    mkdirSync(path.join(root, dir), { recursive: true });
    writeFileSync(path.join(root, dir, "a.ts"), "x");
  }
  const policy = createPathPolicy({ root });
  const resolve = vi.spyOn(policy, "resolve");
  const accepted: string[] = [];
  const report = new Reporter({ verbosity: "quiet", stream: { write: () => true } });
  const intake = new ChangeIntake({ policy, report, agentCwd: root, dryRun: false, accept: (remote) => accepted.push(remote) });
  return { root, take: intake.take, resolve, accepted };
}

describe("ChangeIntake", () => {
  it("decides an absolute path once, whether the tool's event (with its cwd) or the file watcher's (without) names it", () => {
    const { root, take, resolve, accepted } = intakeOverRoot();
    const file = path.join(root, "src", "a.ts");
    const tool: FileChange = { path: file, kind: "write", cause: "Edit", confirmed: true, cwd: root };
    const fs: FileChange = { path: file, kind: "write", cause: "fs", confirmed: true };
    for (let i = 0; i < 5; i++) {
      take(tool);
      take(fs);
    }
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(accepted).toEqual(Array(10).fill("src/a.ts"));
  });

  it("decides a relative path per working directory", () => {
    const { root, take, resolve, accepted } = intakeOverRoot();
    take({ path: "src/a.ts", kind: "write", cause: "Edit", confirmed: true, cwd: root });
    take({ path: "src/a.ts", kind: "write", cause: "Edit", confirmed: true, cwd: path.join(root, "sub") });
    expect(resolve).toHaveBeenCalledTimes(2);
    expect(accepted).toEqual(["src/a.ts", "sub/src/a.ts"]);
  });
});
