import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPathPolicy, isInside, selfAndAncestors, type PathDecision } from "../src/paths/paths.js";

let base: string;
let root: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-paths-")));
  root = path.join(base, "proj");
  mkdirSync(path.join(root, "src"), { recursive: true });
  writeFileSync(path.join(root, "src", "a.ts"), "a");
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

const accepted = (decision: PathDecision) => (decision.ok ? decision.remote : `refused: ${decision.reason}`);

describe("selfAndAncestors", () => {
  it("should give the directory, resolved, then each one above it, the root last", () => {
    expect([...selfAndAncestors("/a/b/../c")]).toEqual(["/a/c", "/a", "/"]);
    expect([...selfAndAncestors("/")]).toEqual(["/"]);
  });
});

describe("isInside", () => {
  it("should compare whole segments, not string prefixes", () => {
    expect(isInside("/a/b", "/a/b/c")).toBe(true);
    expect(isInside("/a/b", "/a/b")).toBe(true);
    expect(isInside("/a/b", "/a/bc")).toBe(false);
    expect(isInside("/a/b", "/a")).toBe(false);
    expect(isInside("/a/b", "/a/b/..foo")).toBe(true);
  });
});

describe("path policy", () => {
  it("should accept an absolute path inside the root", () => {
    expect(accepted(createPathPolicy({ root }).resolve(path.join(root, "src/a.ts")))).toBe("src/a.ts");
  });

  it("should resolve a relative path against the agent's cwd", () => {
    expect(accepted(createPathPolicy({ root }).resolve("a.ts", path.join(root, "src")))).toBe("src/a.ts");
  });

  it("should resolve a relative path against the root when the agent gave no cwd", () => {
    expect(accepted(createPathPolicy({ root }).resolve("src/a.ts"))).toBe("src/a.ts");
  });

  it("should accept a file that does not exist yet (a delete or a new file)", () => {
    expect(accepted(createPathPolicy({ root }).resolve(path.join(root, "new/dir/b.ts")))).toBe("new/dir/b.ts");
  });

  it("should refuse a sibling directory that shares the root's prefix", () => {
    mkdirSync(path.join(base, "proj-evil"));
    const decision = createPathPolicy({ root }).resolve(path.join(base, "proj-evil", "x"));
    expect(decision).toMatchObject({ ok: false, severity: "warn" });
  });

  it("should refuse a .. escape", () => {
    const decision = createPathPolicy({ root }).resolve(path.join(root, "src/../../outside.txt"));
    expect(decision.ok).toBe(false);
    expect(createPathPolicy({ root }).resolve("../outside.txt").ok).toBe(false);
  });

  it("should accept a .. that stays inside the root", () => {
    expect(accepted(createPathPolicy({ root }).resolve(path.join(root, "src/../src/a.ts")))).toBe("src/a.ts");
  });

  it("should refuse a path with a NUL byte", () => {
    const decision = createPathPolicy({ root }).resolve(path.join(root, "a\0b"));
    expect(decision).toMatchObject({ ok: false, severity: "warn" });
    expect(!decision.ok && decision.reason).toContain("NUL");
  });

  it("should refuse a symlinked file that points outside the root", () => {
    writeFileSync(path.join(base, "secret"), "s");
    symlinkSync(path.join(base, "secret"), path.join(root, "link"));
    const decision = createPathPolicy({ root }).resolve(path.join(root, "link"));
    expect(decision).toMatchObject({ ok: false, severity: "warn" });
  });

  it("should refuse a file under a symlinked directory that leaves the root", () => {
    mkdirSync(path.join(base, "elsewhere"));
    symlinkSync(path.join(base, "elsewhere"), path.join(root, "linkdir"));
    expect(createPathPolicy({ root }).resolve(path.join(root, "linkdir/new.txt")).ok).toBe(false);
  });

  it("should follow a symlink that stays inside the root to the file it names", () => {
    symlinkSync(path.join(root, "src/a.ts"), path.join(root, "alias.ts"));
    expect(accepted(createPathPolicy({ root }).resolve(path.join(root, "alias.ts")))).toBe("src/a.ts");
  });

  it("should accept paths when the root itself is reached through a symlink", () => {
    symlinkSync(root, path.join(base, "rootlink"));
    const policy = createPathPolicy({ root: path.join(base, "rootlink") });
    expect(accepted(policy.resolve(path.join(base, "rootlink/src/a.ts")))).toBe("src/a.ts");
    expect(accepted(policy.resolve(path.join(root, "src/a.ts")))).toBe("src/a.ts");
  });

  it("should never sync .git, node_modules or .uspark, at any depth", () => {
    const policy = createPathPolicy({ root });
    for (const p of [".git/config", "node_modules/x/index.js", ".uspark/pending.json", "pkg/node_modules/y.js", "sub/.git/HEAD"]) {
      expect(policy.resolve(path.join(root, p))).toMatchObject({ ok: false, severity: "warn" });
    }
    expect(accepted(policy.resolve(path.join(root, ".gitignore")))).toBe(".gitignore");
  });

  it("should skip --ignore matches quietly", () => {
    const policy = createPathPolicy({ root, ignore: ["*.log", "dist/"] });
    expect(policy.resolve(path.join(root, "a/b.log"))).toMatchObject({ ok: false, severity: "skip" });
    expect(policy.resolve(path.join(root, "dist/x.js"))).toMatchObject({ ok: false, severity: "skip" });
    expect(accepted(policy.resolve(path.join(root, "src/a.ts")))).toBe("src/a.ts");
  });

  it("should strip --prefix remotely and skip files outside it", () => {
    const policy = createPathPolicy({ root, prefix: "src/" });
    expect(accepted(policy.resolve(path.join(root, "src/a.ts")))).toBe("a.ts");
    expect(policy.resolve(path.join(root, "README.md"))).toMatchObject({ ok: false, severity: "skip" });
    expect(policy.resolve(path.join(root, "srcx/a.ts"))).toMatchObject({ ok: false, severity: "skip" });
  });

  it("should refuse a name the project API cannot hold", () => {
    expect(createPathPolicy({ root }).resolve(path.join(root, "a\\b.ts"))).toMatchObject({ ok: false, severity: "warn" });
    expect(createPathPolicy({ root }).resolve(path.join(root, "x".repeat(1100)))).toMatchObject({ ok: false, severity: "warn" });
  });

  it("should refuse the root itself", () => {
    expect(createPathPolicy({ root }).resolve(root).ok).toBe(false);
  });

  it("should skip a .gitignored file whatever its source, telling once which rule (defect 2)", () => {
    writeFileSync(path.join(root, ".gitignore"), "*.pem\n/.env\n");
    const policy = createPathPolicy({ root });
    expect(policy.resolve(path.join(root, ".env"))).toEqual({
      ok: false,
      severity: "notice",
      reason: "not synced .env: ignored by .gitignore:2 (/.env)",
    });
    expect(policy.resolve(path.join(root, ".env"))).toMatchObject({ ok: false, severity: "skip" });
    expect(policy.resolve(path.join(root, "certs/server.pem"))).toMatchObject({
      ok: false,
      reason: "not synced certs/server.pem: ignored by .gitignore:1 (*.pem)",
    });
    expect(accepted(policy.resolve(path.join(root, "src/.env")))).toBe("src/.env");
  });

  it("should follow a .gitignore changed mid-session", () => {
    const policy = createPathPolicy({ root });
    expect(accepted(policy.resolve(path.join(root, "out.log")))).toBe("out.log");
    writeFileSync(path.join(root, ".gitignore"), "*.log\n");
    expect(policy.resolve(path.join(root, "out.log"))).toMatchObject({
      ok: false,
      reason: "not synced out.log: ignored by .gitignore:1 (*.log)",
    });
  });
});
