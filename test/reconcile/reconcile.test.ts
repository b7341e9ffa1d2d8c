import { describe, expect, it } from "vitest";
import { acts, reconcile, type Decision, type Mode } from "../../src/reconcile/reconcile.js";

// docs/sync.md#the-reconcile, row by row. "-" is absent (or, for the base, never held).
// Every combination of base, local and remote up to renaming the hashes: 15 rows.
const TABLE: [base: string, local: string, remote: string, expected: string][] = [
  ["A", "A", "A", "in-sync"],
  ["A", "B", "B", "in-sync"], //          both made the same edit
  ["A", "-", "-", "in-sync"], //          both deleted
  ["-", "A", "A", "in-sync"], //          no base, equal content: in sync
  ["-", "-", "-", "in-sync"],
  ["A", "A", "B", "pull B"], //           remote changed
  ["A", "A", "-", "pull -"], //           remote deleted: a pull deletes here
  ["-", "-", "A", "pull A"], //           only remote: a pull writes it
  ["A", "B", "A", "push B expect A"], //  local changed
  ["A", "-", "A", "push - expect A"], //  local deleted: a delete on condition
  ["-", "A", "-", "push A expect -"], //  only local: expect null
  ["A", "B", "C", "conflict B C"],
  ["-", "A", "B", "conflict A B"], //     no base: nobody can know which is newer
  ["A", "-", "B", "pull B"], //           an edit beats a delete (remote edit, local delete)
  ["A", "B", "-", "push B expect -"], //  an edit beats a delete (local edit, remote delete)
];

const sha = (v: string) => (v === "-" ? null : v);
const show = (v: string | null) => v ?? "-";

function describeDecision(d: Decision): string {
  switch (d.kind) {
    case "in-sync":
      return "in-sync";
    case "pull":
      return `pull ${show(d.sha)}`;
    case "push":
      return `push ${show(d.sha)} expect ${show(d.expect)}`;
    case "conflict":
      return `conflict ${d.local} ${d.remote}`;
  }
}

describe("reconcile(base, local, remote): the truth table of docs/sync.md", () => {
  it.each(TABLE)("base %s, local %s, remote %s → %s", (base, local, remote, expected) => {
    expect(describeDecision(reconcile(sha(base), sha(local), sha(remote)))).toBe(expected);
  });

  it("covers every combination of three sides over two hashes and absence", () => {
    const values = ["-", "A", "B", "C"];
    const seen = new Set<string>();
    for (const b of ["-", "A"])
      for (const l of values)
        for (const r of values) {
          // Rename hashes to first appearance (base first) so equivalent rows collapse onto the table's.
          const names = new Map<string, string>();
          const canon = (v: string) => (v === "-" ? "-" : (names.get(v) ?? (names.set(v, "ABC"[names.size]!), names.get(v)!)));
          seen.add([canon(b), canon(l), canon(r)].join(""));
        }
    expect([...seen].sort()).toEqual(TABLE.map(([b, l, r]) => b + l + r).sort());
  });
});

describe("acts(mode, decision)", () => {
  const cases: [Mode, string, boolean][] = [
    ["push", "push", true],
    ["push", "pull", false], // a push leaves a remote change alone
    ["pull", "push", false], // a pull leaves a local change alone
    ["pull", "pull", true],
    ["two-way", "push", true],
    ["two-way", "pull", true],
  ];
  it.each(cases)("%s carries out a %s decision: %s", (mode, kind, expected) => {
    const decision: Decision = kind === "push" ? { kind: "push", sha: "A", expect: null } : { kind: "pull", sha: "A" };
    expect(acts(mode, decision)).toBe(expected);
  });

  it("every mode handles in-sync and conflict decisions", () => {
    for (const mode of ["push", "pull", "two-way"] as const) {
      expect(acts(mode, { kind: "in-sync" })).toBe(true);
      expect(acts(mode, { kind: "conflict", local: "A", remote: "B" })).toBe(true);
    }
  });
});
