import { describe, expect, it, vi } from "vitest";
import type { FileChange } from "../../src/agents/types.js";
import type { IgnoreEngine } from "../../src/ignore/engine.js";
import type { PathDecision, PathPolicy } from "../../src/paths.js";
import { Reporter } from "../../src/report.js";
import { ChangeIntake } from "../../src/watcher/intake.js";

/** A policy that accepts every path under /project, counting what it was asked. */
function countingPolicy() {
  const resolve = vi.fn((agentPath: string, cwd?: string): PathDecision => {
    const rel = agentPath.startsWith("/") ? agentPath.slice("/project/".length) : agentPath;
    return { ok: true, abs: `/project/${rel}`, rel, remote: rel + (cwd === "/elsewhere" ? ".elsewhere" : "") };
  });
  const policy: PathPolicy = { root: "/project", ignore: { onRulesChanged: () => {} } as unknown as IgnoreEngine, resolve };
  return { policy, resolve };
}

function intake(policy: PathPolicy, accepted: string[]) {
  const report = new Reporter({ verbosity: "quiet", stream: { write: () => true } });
  return new ChangeIntake({ policy, report, agentCwd: "/project", dryRun: false, accept: (remote) => accepted.push(remote) });
}

describe("ChangeIntake", () => {
  it("decides an absolute path once, whether the tool's event (with its cwd) or the file watcher's (without) names it", () => {
    const { policy, resolve } = countingPolicy();
    const accepted: string[] = [];
    const take = intake(policy, accepted).take;
    const tool: FileChange = { path: "/project/src/a.ts", kind: "write", cause: "Edit", confirmed: true, cwd: "/project" };
    const fs: FileChange = { path: "/project/src/a.ts", kind: "write", cause: "fs", confirmed: true };
    for (let i = 0; i < 5; i++) {
      take(tool);
      take(fs);
    }
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(accepted).toEqual(Array(10).fill("src/a.ts"));
  });

  it("decides a relative path per working directory", () => {
    const { policy, resolve } = countingPolicy();
    const accepted: string[] = [];
    const take = intake(policy, accepted).take;
    take({ path: "src/a.ts", kind: "write", cause: "Edit", confirmed: true, cwd: "/project" });
    take({ path: "src/a.ts", kind: "write", cause: "Edit", confirmed: true, cwd: "/elsewhere" });
    expect(resolve).toHaveBeenCalledTimes(2);
    expect(accepted).toEqual(["src/a.ts", "src/a.ts.elsewhere"]);
  });
});
