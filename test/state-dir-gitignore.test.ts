import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { StateDirError, writeStateFile } from "../src/state/state-dir.js";
import { runCli } from "./kit/cli.js";
import { perTest, UNREACHABLE, writeEvents } from "./kit/fixtures.js";

/**
 * `.uspark/` carries its own `.gitignore` (`*`), written whenever the directory is made or found
 * without one (docs/sync.md#the-uspark-directory): the state, the journal and a spooled transcript, which holds what
 * the agent read (a gitignored `.env` too), are never staged by `git add -A`.
 */
const t = perTest("uspark-gitignore-");

function git(...args: string[]): string {
  return execFileSync("git", ["-C", t.root, ...args], {
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

describe(".uspark/.gitignore", () => {
  it("should keep the spooled transcript, the state and the journal of a session out of git add -A", async () => {
    git("init", "-q");
    writeFileSync(path.join(t.root, ".gitignore"), ".env\n");
    writeFileSync(path.join(t.root, ".env"), "API_KEY=read-by-the-agent\n");
    const stream =
      writeEvents(path.join(t.root, "a.txt"), "a") + JSON.stringify({ type: "user", content: "API_KEY=read-by-the-agent" }) + "\n";
    writeFileSync(path.join(t.root, "a.txt"), "a");
    const args = [
      "watch-claude",
      "--transcript",
      "--project-id",
      "p1",
      "--api-url",
      UNREACHABLE,
      "--root",
      t.root,
      "--flush-timeout",
      "300",
      "--no-fs-watch",
    ];
    const result = await runCli(args, { input: stream });
    expect(result.code, result.stderr).toBe(1);
    expect(readdirSync(path.join(t.root, ".uspark")).some((name) => name.includes("transcript"))).toBe(true);
    git("add", "-A");
    expect(git("diff", "--cached", "--name-only").split("\n").filter(Boolean)).toEqual([".gitignore", "a.txt"]);
  });

  it("should write it into a .uspark/ found without one, and leave one that is there alone", async () => {
    mkdirSync(path.join(t.root, ".uspark"));
    await writeStateFile(t.root, "state.json", "{}");
    expect(readFileSync(path.join(t.root, ".uspark", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    writeFileSync(path.join(t.root, ".uspark", ".gitignore"), "# mine\n*\n");
    await writeStateFile(t.root, "state.json", "{}");
    expect(readFileSync(path.join(t.root, ".uspark", ".gitignore"), "utf8")).toBe("# mine\n*\n");
  });

  describe("within one process", () => {
    it("should write it again when it is deleted between two saves", async () => {
      await writeStateFile(t.root, "state.json", "{}");
      rmSync(path.join(t.root, ".uspark", ".gitignore"));
      await writeStateFile(t.root, "state.json", "{}");
      expect(readFileSync(path.join(t.root, ".uspark", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    });

    it("should write it again into a .uspark removed and made again meanwhile, even by someone else", async () => {
      await writeStateFile(t.root, "state.json", "{}");
      rmSync(path.join(t.root, ".uspark"), { recursive: true });
      mkdirSync(path.join(t.root, ".uspark"));
      await writeStateFile(t.root, "state.json", "{}");
      expect(readFileSync(path.join(t.root, ".uspark", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    });

    it("should still refuse a directory in the state file's place", async () => {
      mkdirSync(path.join(t.root, ".uspark", "state.json"), { recursive: true });
      await expect(writeStateFile(t.root, "state.json", "{}")).rejects.toBeInstanceOf(StateDirError);
      expect(readdirSync(path.join(t.root, ".uspark")).sort()).toEqual([".gitignore", "state.json"]); // no temp file left
    });
  });
});
