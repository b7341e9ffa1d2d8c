import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI } from "../kit/cli.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "uspark-cwd-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI from a directory that is removed just before it starts (defect 20). */
function runInDeletedDirectory(...args: string[]) {
  const script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"';
  return spawnSync("sh", ["-c", script, "sh", process.execPath, CLI, ...args], {
    cwd: dir,
    input: "{}\n",
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
}

describe("a working directory deleted under us", () => {
  it.each([
    ["watch", ["watch", "--dry-run"]],
    ["push", ["push", "--project-id", "p"]],
    ["pull", ["pull", "--project-id", "p"]],
  ])("%s says so in one line and exits 2, without a stack trace", (_, args) => {
    const result = runInDeletedDirectory(...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'uspark: error: the current directory no longer exists (it was deleted or replaced) (cd into the project again, e.g. cd "$PWD")\n',
    );
  });
});
