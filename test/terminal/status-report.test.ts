import { describe, expect, it } from "vitest";
import { longStatus, shortStatus, statusEntries, type StatusReport } from "../../src/terminal/status-report.js";
import { emptyPlan, type LocalFile, type Plan } from "../../src/reconcile/plan.js";

/** The pure half of `uspark status`: from a dry run's plan to one state per path, and its two text forms. */

const SHA = "a".repeat(64);
const local: LocalFile = { sha256: SHA, size: 1, stat: { size: 1, mtimeMs: 1, ino: 1 }, readAt: 1 };

function planWith(edit: (plan: Plan) => void): Plan {
  const plan = emptyPlan();
  edit(plan);
  return plan;
}

const facts = (plan: Plan, inBase: string[] = [], pending: string[] = []) => ({
  plan,
  inBase: (p: string) => inBase.includes(p),
  openConflicts: new Map([["open.txt", { local: SHA, remote: SHA, copy: "open.conflict-x.txt", copySha: SHA, at: "t" }]]),
  pending,
});

describe("statusEntries", () => {
  it("names each kind of change by side, an addition where the base never held the path", () => {
    const plan = planWith((p) => {
      p.puts.push(
        { path: "m", sha256: SHA, size: 1, expect: SHA, from: "m", local },
        { path: "a", sha256: SHA, size: 1, expect: null, from: "a", local },
      );
      p.deletes.push({ path: "d", expect: SHA });
      p.leftAlone.push(
        { path: "rm", decision: { kind: "pull", sha: SHA } },
        { path: "ra", decision: { kind: "pull", sha: SHA } },
        { path: "rd", decision: { kind: "pull", sha: null } },
      );
    });
    expect(statusEntries(facts(plan, ["m", "d", "rm", "rd"]))).toEqual([
      { path: "a", status: "added-here" },
      { path: "d", status: "deleted-here" },
      { path: "m", status: "modified-here" },
      { path: "ra", status: "added-remotely" },
      { path: "rd", status: "deleted-remotely" },
      { path: "rm", status: "modified-remotely" },
    ]);
  });

  it("a path is listed once: a conflict beats a change, a change beats a journal entry; open conflicts carry their copy", () => {
    const plan = planWith((p) => {
      p.conflicts.push({ path: "c", local: SHA, remote: SHA, copy: "c.conflict-y", unsynced: false });
      p.stillOpen.push({ path: "open.txt", remote: SHA });
      p.held.remote.push("h");
      p.puts.push({ path: "j", sha256: SHA, size: 1, expect: SHA, from: "j", local });
    });
    expect(statusEntries(facts(plan, ["j"], ["j", "only-journal"]))).toEqual([
      { path: "c", status: "conflict", copy: "c.conflict-y" },
      { path: "h", status: "held-delete" },
      { path: "j", status: "modified-here" },
      { path: "only-journal", status: "pending" },
      { path: "open.txt", status: "conflict", copy: "open.conflict-x.txt" },
    ]);
  });
});

describe("the text forms", () => {
  const report: StatusReport = {
    format: 1,
    projectId: "p",
    apiUrl: "http://127.0.0.1:4400",
    root: "/r",
    baseVersion: 3,
    remoteVersion: 4,
    inSync: false,
    paths: [
      { path: "a", status: "modified-here" },
      { path: "b", status: "deleted-remotely" },
      { path: "c", status: "conflict", copy: "c.conflict-z" },
    ],
  };

  it("--short: two letters, here then remotely", () => {
    expect(shortStatus(report)).toBe("M  a\n D b\nUU c\n");
  });

  it("the long form: sections with their next step, the versions, a count", () => {
    expect(longStatus(report)).toBe(
      [
        "project p on http://127.0.0.1:4400: synced here up to version 3, remote at version 4",
        "Changes here (uspark push sends them):",
        "  modified:     a",
        "Changes remotely (uspark pull takes them):",
        "  deleted:      b",
        "Conflicts (uspark resolve <path> --mine | --theirs | --both):",
        "  both changed: c (yours: c.conflict-z)",
        "3 not in sync",
        "",
      ].join("\n"),
    );
    expect(longStatus({ ...report, inSync: true, paths: [] })).toMatch(/\nin sync: nothing to push or pull\n$/);
  });
});
