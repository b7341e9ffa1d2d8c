import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../../src/cli.js";
import { CLI, runCli } from "../../kit/cli.js";

/** `uspark completion bash|zsh|fish`, through the built CLI: every subcommand named, bash's script parses and completes. */

const subcommands = buildProgram().commands.map((command) => command.name());

describe("uspark completion", () => {
  it("knows the program's subcommands (the list the scripts must name)", () => {
    expect(subcommands).toEqual(
      expect.arrayContaining(["watch-claude", "watch", "run", "push", "pull", "projects", "serve", "completion"]),
    );
  });

  it.each(["bash", "zsh", "fish"])("%s: the script names every subcommand", async (shell) => {
    const result = await runCli(["completion", shell]);
    expect(result.code, result.stderr).toBe(0);
    const script = result.stdout.toString();
    for (const name of subcommands) expect(script).toMatch(new RegExp(`(^|[\\s'"(])${name}([\\s:)]|$)`, "m"));
    // fish names a long flag as `-l timeout`; the older name --flush-timeout is hidden.
    expect(script).toMatch(/--timeout|-l timeout/);
    expect(script).not.toContain("flush-timeout");
  });

  it("bash: the script parses (bash -n) and completes subcommands, flags and a command's words", async () => {
    const script = (await runCli(["completion", "bash"])).stdout.toString();
    expect(spawnSync("bash", ["-n"], { input: script }).status).toBe(0);
    const complete = (...words: string[]) => {
      const probe = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _uspark; echo "\${COMPREPLY[*]}"`;
      const run = spawnSync("bash", ["-c", probe], { encoding: "utf8" });
      expect(run.status, run.stderr).toBe(0);
      return run.stdout.trim().split(" ");
    };
    expect(complete("uspark", "pu")).toEqual(["push", "pull"]);
    expect(complete("uspark", "pull", "--ti")).toEqual(["--timeout"]);
    expect(complete("uspark", "projects", "cr")).toEqual(["create"]);
    expect(complete("uspark", "completion", "")).toEqual(["bash", "zsh", "fish"]);
  });

  it.skipIf(!existsSync("/dev/full"))("a stdout that cannot be written is exit 74, said on stderr", () => {
    const full = openSync("/dev/full", "w");
    try {
      const run = spawnSync(process.execPath, [CLI, "completion", "bash"], { stdio: ["ignore", full, "pipe"], encoding: "utf8" });
      expect(run.status).toBe(74);
      expect(run.stderr).toMatch(/writing stdout failed: ENOSPC/);
    } finally {
      closeSync(full);
    }
  });

  it("an unknown shell is a usage error (exit 2)", async () => {
    const result = await runCli(["completion", "tcsh"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("bash, zsh, fish");
  });
});
