import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findRoot } from "../src/reconcile/root.js";
import { tempDir } from "./kit/sync.js";

/** Root discovery (docs/commands.md#finding-the-root): the nearest ancestor holding .uspark/state.json, never $HOME. */

let dir = "";
let cleanup = async () => {};
beforeEach(async () => ({ dir, cleanup } = await tempDir("uspark-root-")));
afterEach(() => cleanup());

function pulled(...parts: string[]): string {
  const root = path.join(dir, ...parts);
  mkdirSync(path.join(root, ".uspark"), { recursive: true });
  writeFileSync(path.join(root, ".uspark", "state.json"), "{}");
  return root;
}

function made(...parts: string[]): string {
  const made = path.join(dir, ...parts);
  mkdirSync(made, { recursive: true });
  return made;
}

describe("findRoot", () => {
  it("is the nearest pulled ancestor, the current directory included", () => {
    const outer = pulled("outer");
    const inner = pulled("outer", "a", "inner");
    expect(findRoot(made("outer", "a", "inner", "b", "c"), undefined)).toBe(inner);
    expect(findRoot(inner, undefined)).toBe(inner);
    expect(findRoot(made("outer", "a"), undefined)).toBe(outer);
  });

  it("is the current directory when no ancestor was pulled", () => {
    const here = made("plain", "sub");
    expect(findRoot(here, undefined)).toBe(here);
  });

  it("never is $HOME, spelled through a link or not: a state file there is passed over", () => {
    const home = pulled("home");
    symlinkSync(home, path.join(dir, "home-link"));
    const work = made("home", "work");
    expect(findRoot(work, home)).toBe(work);
    expect(findRoot(work, path.join(dir, "home-link"))).toBe(work);
    expect(findRoot(home, home)).toBe(home); // the current directory, found as such
  });

  it("a .uspark that is a link, or a state.json that is a directory, makes no root", () => {
    const target = pulled("target");
    const linked = made("linked");
    symlinkSync(path.join(target, ".uspark"), path.join(linked, ".uspark"));
    const sub = made("linked", "sub");
    expect(findRoot(sub, undefined)).toBe(sub);
    mkdirSync(path.join(made("odd"), ".uspark", "state.json"), { recursive: true });
    expect(findRoot(made("odd", "x"), undefined)).toBe(path.join(dir, "odd", "x"));
  });
});
