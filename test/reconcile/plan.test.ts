import { describe, expect, it } from "vitest";
import type { OpenConflict } from "../../src/reconcile/base.js";
import { plan, type LocalFile, type PathState, type PlanContext, type Resolution } from "../../src/reconcile/plan.js";

const NOW = new Date("2026-11-25T10:15:00Z");
const file = (sha: string): LocalFile => ({
  sha256: sha,
  size: sha.length,
  stat: { size: sha.length, mtimeMs: 1, ino: 1 },
  readAt: 10_000,
});
const remote = (sha: string) => ({ sha256: sha, size: sha.length });
const context = (over: Partial<PlanContext> = {}): PlanContext => ({
  mode: "push",
  open: new Map(),
  held: new Set(),
  baseFiles: 100,
  now: NOW,
  host: "ci-7",
  ...over,
});
const state = (path: string, base: string | null, local: string | null, rem: string | null, evidence = false): PathState => ({
  path,
  base,
  local: local === null ? null : file(local),
  remote: rem === null ? null : remote(rem),
  evidence,
});
const SHA_B = "b".repeat(64);

describe("plan: what each mode carries out", () => {
  const states = [
    state("local-edit", "a", "b", "a"),
    state("remote-edit", "a", "a", "c"),
    state("local-delete", "a", null, "a"),
    state("remote-delete", "a", "a", null),
    state("same", "a", "a", "a"),
  ];

  it("a push sends local changes with their expectation and leaves remote ones alone", () => {
    const p = plan(states, context({ mode: "push" }));
    expect(p.puts.map((x) => [x.path, x.sha256, x.expect])).toEqual([["local-edit", "b", "a"]]);
    expect(p.deletes).toEqual([{ path: "local-delete", expect: "a" }]);
    expect(p.writes).toEqual([]);
    expect(p.removes).toEqual([]);
    expect(p.leftAlone.map((x) => x.path)).toEqual(["remote-edit", "remote-delete"]);
    expect(p.settles.map((x) => x.path)).toEqual(["same"]);
  });

  it("a pull writes remote changes over unchanged local files and leaves local ones alone", () => {
    const p = plan(states, context({ mode: "pull" }));
    expect(p.writes.map((w) => [w.path, w.sha256, w.expectLocal?.sha256])).toEqual([["remote-edit", "c", "a"]]);
    expect(p.removes.map((r) => [r.path, r.expectLocal.sha256])).toEqual([["remote-delete", "a"]]);
    expect(p.puts).toEqual([]);
    expect(p.leftAlone.map((x) => x.path)).toEqual(["local-edit", "local-delete"]);
  });

  it("a two-way watch does both", () => {
    const p = plan(states, context({ mode: "two-way" }));
    expect([p.puts.length, p.deletes.length, p.writes.length, p.removes.length, p.leftAlone.length]).toEqual([1, 1, 1, 1, 0]);
  });
});

describe("plan: conflicts keep both", () => {
  it("a new conflict commits the local version as a copy next to the remote file, expecting nothing there", () => {
    const p = plan([state("src/app.ts", "a", SHA_B, "c")], context());
    expect(p.conflicts).toEqual([
      { path: "src/app.ts", local: SHA_B, remote: "c", copy: "src/app.conflict-20261125-101500-ci-7-bbbbbb.ts", unsynced: false },
    ]);
    // No base: never synced here, which the warning says instead of "changed here and remotely".
    expect(plan([state("src/app.ts", null, SHA_B, "c")], context()).conflicts.map((c) => c.unsynced)).toEqual([true]);
    expect(p.copies.map((c) => [c.path, c.sha256, c.expect, c.from])).toEqual([
      ["src/app.conflict-20261125-101500-ci-7-bbbbbb.ts", SHA_B, null, "src/app.ts"],
    ]);
    expect(p.puts).toEqual([]);
    expect(p.writes).toEqual([]);
  });

  it("a new copy is never named over a path the remote holds: its time moves on by a second", () => {
    const taken = new Set(["src/app.conflict-20261125-101500-ci-7-bbbbbb.ts", "src/app.conflict-20261125-101501-ci-7-bbbbbb.ts"]);
    const p = plan([state("src/app.ts", "a", SHA_B, "c")], context({ taken: (path) => taken.has(path) }));
    expect(p.copies.map((c) => [c.path, c.expect])).toEqual([["src/app.conflict-20261125-101502-ci-7-bbbbbb.ts", null]]);
  });

  const open: OpenConflict = { local: SHA_B, remote: "c", copy: "a.conflict-x.txt", copySha: SHA_B, at: NOW.toISOString() };
  const uncopied: OpenConflict = { local: SHA_B, remote: "c", at: NOW.toISOString() };

  it("a pull never commits: a conflict it meets keeps both as they are, with no copy, new or open", () => {
    // [open record, local] → conflicts (copy), stillOpen, copies
    const rows: [OpenConflict | undefined, string, { copy?: string }[], number, number][] = [
      [undefined, SHA_B, [{ copy: undefined }], 0, 0],
      [uncopied, SHA_B, [], 1, 0],
      [open, SHA_B, [], 1, 0],
      [open, "d", [], 1, 0], // an edit of the local version does not move the copy either
    ];
    for (const [record, local, conflicts, stillOpen, copies] of rows) {
      const p = plan([state("a.txt", "a", local, "c")], context({ mode: "pull", open: new Map(record ? [["a.txt", record]] : []) }));
      expect(p.conflicts.map((c) => ({ copy: c.copy }))).toEqual(conflicts);
      expect([p.stillOpen.length, p.copies.length, p.puts.length, p.deletes.length, p.writes.length]).toEqual([stillOpen, copies, 0, 0, 0]);
    }
  });

  it("a command that writes commits the copy of a conflict a pull recorded, and says it then", () => {
    for (const mode of ["push", "two-way"] as const) {
      const p = plan([state("a.txt", "a", SHA_B, "c")], context({ mode, open: new Map([["a.txt", uncopied]]) }));
      expect(p.conflicts.map((c) => c.copy)).toEqual(["a.conflict-20261125-101500-ci-7-bbbbbb.txt"]);
      expect(p.copies.map((c) => [c.path, c.expect])).toEqual([["a.conflict-20261125-101500-ci-7-bbbbbb.txt", null]]);
    }
  });
  it("an open conflict is not said again, and its copy moves only when the local version does", () => {
    const same = plan([state("a.txt", "a", SHA_B, "c")], context({ open: new Map([["a.txt", open]]) }));
    expect(same.conflicts).toEqual([]);
    expect(same.copies).toEqual([]);
    expect(same.stillOpen).toEqual([{ path: "a.txt", remote: "c" }]);
    const edited = plan([state("a.txt", "a", "d", "c")], context({ open: new Map([["a.txt", open]]) }));
    expect(edited.copies.map((c) => [c.path, c.sha256, c.expect])).toEqual([["a.conflict-x.txt", "d", SHA_B]]);
  });

  it("an open conflict is resolved when the two sides are made equal, or one side gives way", () => {
    const opened = new Map([["a.txt", open]]);
    expect(plan([state("a.txt", "a", "c", "c")], context({ open: opened })).resolved).toEqual(["a.txt"]);
    expect(plan([state("a.txt", "a", null, "c")], context({ open: opened, mode: "two-way" })).resolved).toEqual(["a.txt"]);
  });

  it("push --force <path> commits mine over theirs; pull --force <path> writes theirs after a backup", () => {
    const force = (p: string) => p === "a.txt";
    const mine = plan([state("a.txt", "a", "b", "c")], context({ mode: "push", force }));
    expect(mine.puts.map((x) => [x.sha256, x.expect])).toEqual([["b", "c"]]);
    expect(mine.copies).toEqual([]);
    const theirs = plan([state("a.txt", "a", "b", "c")], context({ mode: "pull", force }));
    expect(theirs.writes.map((w) => [w.sha256, w.backup, w.expectLocal?.sha256])).toEqual([["c", true, "b"]]);
  });
});

describe("plan: uspark resolve ends a conflict as asked", () => {
  const COPY = "a.conflict-x.txt";
  const withCopy: OpenConflict = { local: SHA_B, remote: "c", copy: COPY, copySha: SHA_B, at: NOW.toISOString() };
  const noCopy: OpenConflict = { local: SHA_B, remote: "c", at: NOW.toISOString() };
  const resolved = (choice: Resolution, record: OpenConflict | undefined, local: string | null = SHA_B, rem: string | null = "c") => {
    const p = plan(
      [state("a.txt", "a", local, rem)],
      context({
        mode: "push",
        open: new Map(record ? [["a.txt", record]] : []),
        resolve: (path) => (path === "a.txt" ? choice : undefined),
      }),
    );
    return {
      puts: p.puts.map((x) => [x.path, x.sha256, x.expect]),
      deletes: p.deletes.map((d) => [d.path, d.expect]),
      writes: p.writes.map((w) => [w.path, w.sha256, w.expectLocal?.sha256 ?? null, w.backup]),
      resolved: p.resolved,
      copies: p.copies.length + p.conflicts.length,
    };
  };
  const C1 = "a.conflict-20261125-101500-ci-7-bbbbbb.txt";
  // [choice, open record, local, remote] → what is done
  const table: [Resolution, OpenConflict | undefined, string | null, string | null, ReturnType<typeof resolved>][] = [
    ["mine", withCopy, SHA_B, "c", { puts: [["a.txt", SHA_B, "c"]], deletes: [[COPY, SHA_B]], writes: [], resolved: ["a.txt"], copies: 0 }],
    ["mine", noCopy, SHA_B, "c", { puts: [["a.txt", SHA_B, "c"]], deletes: [], writes: [], resolved: ["a.txt"], copies: 0 }],
    ["mine", undefined, SHA_B, "c", { puts: [["a.txt", SHA_B, "c"]], deletes: [], writes: [], resolved: [], copies: 0 }],
    [
      "mine",
      withCopy,
      null,
      "c",
      {
        puts: [],
        deletes: [
          [COPY, SHA_B],
          ["a.txt", "c"],
        ],
        writes: [],
        resolved: ["a.txt"],
        copies: 0,
      },
    ],
    [
      "theirs",
      withCopy,
      SHA_B,
      "c",
      { puts: [], deletes: [[COPY, SHA_B]], writes: [["a.txt", "c", SHA_B, true]], resolved: ["a.txt"], copies: 0 },
    ],
    ["theirs", withCopy, "c", "c", { puts: [], deletes: [[COPY, SHA_B]], writes: [], resolved: ["a.txt"], copies: 0 }],
    [
      "both",
      withCopy,
      SHA_B,
      "c",
      {
        puts: [],
        deletes: [],
        writes: [
          [COPY, SHA_B, null, false],
          ["a.txt", "c", SHA_B, true],
        ],
        resolved: ["a.txt"],
        copies: 0,
      },
    ],
    [
      "both",
      withCopy,
      "d",
      "c",
      {
        puts: [[COPY, "d", SHA_B]],
        deletes: [],
        writes: [
          [COPY, "d", null, false],
          ["a.txt", "c", "d", true],
        ],
        resolved: ["a.txt"],
        copies: 0,
      },
    ],
    [
      "both",
      noCopy,
      SHA_B,
      "c",
      {
        puts: [[C1, SHA_B, null]],
        deletes: [],
        writes: [
          [C1, SHA_B, null, false],
          ["a.txt", "c", SHA_B, true],
        ],
        resolved: ["a.txt"],
        copies: 0,
      },
    ],
  ];
  it.each(table)("%s with %o, local %s, remote %s", (choice, record, local, rem, expected) => {
    expect(resolved(choice, record, local, rem)).toEqual(expected);
  });

  it("a path in sync with no open conflict is not the resolution's business", () => {
    expect(resolved("mine", undefined, "c", "c")).toEqual({ puts: [], deletes: [], writes: [], resolved: [], copies: 0 });
  });
});

describe("plan: the mass-delete guard", () => {
  const tree = (n: number, prefix: string, base: string | null, local: string | null, rem: string | null, evidence = false) =>
    Array.from({ length: n }, (_, i) => state(`${prefix}/${i}`, base, local, rem, evidence));

  it("holds the deletes when the tree lost most of what the base held (a volume not mounted)", () => {
    const p = plan(tree(60, "src", "a", null, "a"), context({ baseFiles: 60 }));
    expect(p.held.tripped).toBe(true);
    expect(p.held.remote).toHaveLength(60);
    expect(p.deletes).toEqual([]);
  });

  it("a rename (mv src lib) is no mass delete: as many files are new as are gone", () => {
    const p = plan([...tree(60, "src", "a", null, "a"), ...tree(60, "lib", null, "a", null)], context({ baseFiles: 60 }));
    expect(p.held.tripped).toBe(false);
    expect(p.deletes).toHaveLength(60);
    expect(p.puts).toHaveLength(60);
  });

  it("deletes announced by events are not held; deletes held before stay held until forced", () => {
    expect(plan(tree(60, "src", "a", null, "a", true), context({ baseFiles: 60 })).deletes).toHaveLength(60);
    const held = new Set(["src/1"]);
    const again = plan([state("src/1", "a", null, "a", true)], context({ held }));
    expect(again.held.remote).toEqual(["src/1"]);
    expect(again.deletes).toEqual([]);
    expect(plan([state("src/1", "a", null, "a")], context({ held, force: (p) => p === "src/1" })).deletes).toHaveLength(1);
    expect(plan(tree(60, "src", "a", null, "a"), context({ baseFiles: 60, force: () => true })).deletes).toHaveLength(60);
  });

  it("guards a pull the same way: a remote that lost most of what was pulled deletes nothing here", () => {
    const p = plan(tree(60, "src", "a", "a", null), context({ baseFiles: 60, mode: "pull" }));
    expect(p.held.local).toHaveLength(60);
    expect(p.removes).toEqual([]);
  });
});

describe("plan: a delete of a path never synced here", () => {
  it("is listed to be said (with an event, in a push; never found by a scan), and the remote file left alone", () => {
    const p = plan(
      [state("gone.txt", null, null, "r", true), state("scanned.txt", null, null, "r"), state("synced.txt", "r", null, "r", true)],
      context(),
    );
    expect(p.unsyncedDeletes).toEqual(["gone.txt"]);
    expect(p.deletes.map((d) => d.path)).toEqual(["synced.txt"]);
    expect(p.leftAlone.map((l) => l.path)).toEqual(["gone.txt", "scanned.txt"]);
    expect(plan([state("gone.txt", null, null, "r", true)], context({ mode: "two-way" })).unsyncedDeletes).toEqual([]);
  });
});

describe("plan: a file and a directory under one name", () => {
  const clashes = new Map([
    ["x/y", "x"],
    ["d", "d/a.txt"],
  ]);
  const clash = (path: string) => clashes.get(path);

  it("is a conflict whose copy clashes with nothing: beside the file above, or beside the directory", () => {
    const p = plan([state("x/y", null, "m", null), state("d", "b", "m", null)], context({ clash }));
    expect(p.conflicts.map((c) => [c.path, c.clash, c.copy])).toEqual([
      ["x/y", "x", expect.stringMatching(/^x\.conflict-20261125-101500-ci-7-m\/y$/)],
      ["d", "d/a.txt", expect.stringMatching(/^d\.conflict-20261125-101500-ci-7-/)],
    ]);
    expect(p.puts).toEqual([]);
    expect(p.copies.map((c) => c.from)).toEqual(["x/y", "d"]);
  });

  it("a copy under a name the remote holds already (made in the same second: x.conflict-…/y is there) goes a second later (simulation seed 3439: 409 until the commit failed)", () => {
    const first = plan([state("x/y", null, "m", null)], context({ clash })).copies[0]!.path;
    const p = plan([state("x/y", null, "m", null)], context({ clash, taken: (path) => path === first }));
    expect(p.copies.map((c) => c.path)).toEqual([expect.stringMatching(/^x\.conflict-20261125-101501-ci-7-m\/y$/)]);
  });

  it("stays open while the clash does, its copy following local edits; a path the remote holds is no clash", () => {
    const open = new Map([["x/y", { local: "m", remote: null, copy: "x.conflict-1/y", copySha: "m", at: "" }]]);
    const still = plan([state("x/y", null, "m2", null)], context({ clash, open }));
    expect(still.stillOpen).toEqual([{ path: "x/y", remote: null }]);
    expect(still.copies.map((c) => [c.path, c.sha256])).toEqual([["x.conflict-1/y", "m2"]]);
    expect(plan([state("x/y", "r", "m", "r")], context({ clash })).puts.map((p) => p.path)).toEqual(["x/y"]);
  });
});
