import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { gitCleanFiles } from "../../src/reconcile/git-clean.js";

/**
 * Which files git reports clean (docs/sync.md#fresh-checkouts), and when git is asked at all: a root with no
 * `.git` up the tree is not a checkout, and asking costs a git process on the first sync of
 * every such root. git here is the real one, behind a script on PATH that logs each call.
 */

const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
let dir: string;
let gitLog: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "uspark-git-clean-"));
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  gitLog = path.join(dir, "git.log");
  writeFileSync(gitLog, "");
  writeFileSync(path.join(bin, "git"), `#!/bin/sh\necho "$*" >> '${gitLog}'\nexec '${realGit}' "$@"\n`);
  chmodSync(path.join(bin, "git"), 0o755);
  vi.stubEnv("PATH", `${bin}${path.delimiter}${process.env.PATH}`);
  for (const name of ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES"]) vi.stubEnv(name, undefined);
  vi.stubEnv("GIT_CONFIG_GLOBAL", "/dev/null");
  vi.stubEnv("GIT_CONFIG_NOSYSTEM", "1");
});

afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync(realGit, ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, stdio: "pipe" });
const gitCalls = () => readFileSync(gitLog, "utf8").split("\n").filter(Boolean);

/** A repository at `top` with `files` committed. */
function checkout(top: string, files: Record<string, string>): void {
  mkdirSync(top, { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(top, file)), { recursive: true });
    writeFileSync(path.join(top, file), content);
  }
  git(top, "init", "-q");
  git(top, "add", "-A");
  git(top, "commit", "-qm", "init");
}

describe("gitCleanFiles", () => {
  it("should not run git for a root with no .git in it or above it", async () => {
    const root = path.join(dir, "plain");
    mkdirSync(root);
    writeFileSync(path.join(root, "a.txt"), "a\n");
    expect((await gitCleanFiles(root)).size).toBe(0);
    expect(gitCalls()).toEqual([]);
  });

  it("should ask git under a checkout's top, and name the clean files relative to the root", async () => {
    const top = path.join(dir, "repo");
    checkout(top, { "sub/a.txt": "a\n", "sub/b.txt": "b\n", "c.txt": "c\n" });
    writeFileSync(path.join(top, "sub", "b.txt"), "changed\n");
    expect([...(await gitCleanFiles(path.join(top, "sub"))).keys()]).toEqual(["a.txt"]);
    expect(gitCalls()[0]).toContain("rev-parse");
  });

  it("should ask git where .git is a file (a linked worktree)", async () => {
    const top = path.join(dir, "repo");
    checkout(top, { "a.txt": "a\n" });
    const linked = path.join(dir, "linked");
    git(top, "worktree", "add", "-q", linked);
    expect([...(await gitCleanFiles(linked)).keys()]).toEqual(["a.txt"]);
  });

  it("should ask git when GIT_DIR names the repository, with no .git up the tree", async () => {
    const top = path.join(dir, "repo");
    checkout(top, { "a.txt": "a\n" });
    const root = path.join(dir, "elsewhere");
    mkdirSync(root);
    writeFileSync(path.join(root, "a.txt"), "a\n");
    vi.stubEnv("GIT_DIR", path.join(top, ".git"));
    vi.stubEnv("GIT_WORK_TREE", root);
    expect([...(await gitCleanFiles(root)).keys()]).toEqual(["a.txt"]);
  });
});
