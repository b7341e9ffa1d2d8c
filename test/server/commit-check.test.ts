import { describe, expect, it } from "vitest";
import { canonicalChanges, chainHash, ZERO_CHAIN } from "../../src/api/chain.js";
import type { Change } from "../../src/api/types.js";
import {
  canonicalJson,
  checkCommit,
  checkExpectations,
  fileDirClashes,
  filesUnder,
  pathsExpected,
  requestFingerprint,
  touchesPath,
} from "../../src/server/commit-check.js";

const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);
const current = new Map([
  ["here.txt", { sha256: A, size: 1 }],
  ["other.txt", { sha256: B, size: 2 }],
]);

describe("checkExpectations", () => {
  it.each<[string, Change]>([
    ["a put expecting the current hash", { op: "put", path: "here.txt", sha256: C, size: 3, expect: A }],
    ["a put expecting an absent path to be absent", { op: "put", path: "new.txt", sha256: C, size: 3, expect: null }],
    ["a delete expecting the current hash", { op: "delete", path: "here.txt", expect: A }],
    ["a delete expecting an absent path to be absent", { op: "delete", path: "gone.txt", expect: null }],
    ["a put without expect over anything", { op: "put", path: "here.txt", sha256: C, size: 3 }],
    ["a delete without expect of an absent path", { op: "delete", path: "gone.txt" }],
  ])("passes %s", (_name, change) => {
    expect(checkExpectations([change], current)).toEqual([]);
  });

  it.each<[string, Change, { sha256: string | null; size: number | null }]>([
    ["a put expecting another hash", { op: "put", path: "here.txt", sha256: C, size: 3, expect: B }, { sha256: A, size: 1 }],
    [
      "a put expecting absence of a present path",
      { op: "put", path: "here.txt", sha256: C, size: 3, expect: null },
      { sha256: A, size: 1 },
    ],
    [
      "a put expecting a hash at an absent path",
      { op: "put", path: "new.txt", sha256: C, size: 3, expect: A },
      { sha256: null, size: null },
    ],
    ["a delete expecting another hash", { op: "delete", path: "here.txt", expect: C }, { sha256: A, size: 1 }],
    ["a delete expecting absence of a present path", { op: "delete", path: "here.txt", expect: null }, { sha256: A, size: 1 }],
    ["a delete expecting a hash at an absent path", { op: "delete", path: "gone.txt", expect: A }, { sha256: null, size: null }],
  ])("fails %s, naming what the path holds now", (_name, change, now) => {
    expect(checkExpectations([change], current)).toEqual([{ path: change.path, ...now }]);
  });

  it("names every failed path once, in the order of the changes, and only those", () => {
    const changes: Change[] = [
      { op: "delete", path: "other.txt", expect: A },
      { op: "put", path: "here.txt", sha256: C, size: 3, expect: A },
      { op: "put", path: "new.txt", sha256: C, size: 3, expect: B },
      { op: "delete", path: "other.txt", expect: C },
      { op: "put", path: "free.txt", sha256: C, size: 3 },
    ];
    expect(checkExpectations(changes, current)).toEqual([
      { path: "other.txt", sha256: B, size: 2 },
      { path: "new.txt", sha256: null, size: null },
    ]);
  });

  it("checks every expectation against the state before the commit, not after its earlier changes", () => {
    const changes: Change[] = [
      { op: "put", path: "new.txt", sha256: C, size: 3, expect: null },
      { op: "delete", path: "new.txt", expect: C },
    ];
    expect(checkExpectations(changes, current)).toEqual([{ path: "new.txt", sha256: null, size: null }]);
  });
});

describe("pathsExpected", () => {
  it("lists each path with an expect once, null included", () => {
    const changes: Change[] = [
      { op: "delete", path: "a", expect: null },
      { op: "delete", path: "b" },
      { op: "put", path: "a", sha256: A, size: 1, expect: A },
      { op: "put", path: "c", sha256: A, size: 1, expect: A },
    ];
    expect(pathsExpected(changes)).toEqual(["a", "c"]);
  });
});

describe("checkCommit", () => {
  const sizes = new Map([[A, 1]]);
  const stored = { sizes, current, under: new Map<string, string[]>(), version: 7 };

  it("refuses a wrong size (400) before a failed expectation (409) before a missing blob (422)", () => {
    const wrongSize: Change = { op: "put", path: "x", sha256: A, size: 5 };
    const conflicting: Change = { op: "delete", path: "here.txt", expect: null };
    const missing: Change = { op: "put", path: "y", sha256: C, size: 1 };
    expect(checkCommit([missing, conflicting, wrongSize], stored)).toEqual({ kind: "size_mismatch", path: "x", size: 5, actual: 1 });
    expect(checkCommit([missing, conflicting], stored)).toEqual({
      kind: "conflict",
      conflicts: [{ path: "here.txt", sha256: A, size: 1 }],
      version: 7,
    });
    expect(checkCommit([missing], stored)).toEqual({ kind: "missing_blobs", missing: [C] });
    expect(checkCommit([{ op: "put", path: "x", sha256: A, size: 1, expect: null }], stored)).toBeUndefined();
  });
});

describe("requestFingerprint", () => {
  const request = {
    changes: [{ op: "put" as const, path: "a", sha256: A, size: 1, expect: null }],
    source: { agent: "x", sessionId: "s" },
  };

  it("is the same for the same JSON with keys in another order", () => {
    const reordered = JSON.parse(
      '{"source":{"sessionId":"s","agent":"x"},"changes":[{"expect":null,"size":1,"sha256":"' + A + '","path":"a","op":"put"}]}',
    );
    expect(requestFingerprint(reordered)).toBe(requestFingerprint(request));
  });

  it.each([
    ["another expect", { ...request, changes: [{ ...request.changes[0]!, expect: A }] }],
    ["no expect", { ...request, changes: [{ op: "put" as const, path: "a", sha256: A, size: 1 }] }],
    ["another source", { ...request, source: { agent: "y", sessionId: "s" } }],
    ["no source", { changes: request.changes }],
    ["the changes in another order", { ...request, changes: [...request.changes, { op: "delete" as const, path: "b" }].reverse() }],
  ])("differs for %s", (_name, other) => {
    expect(requestFingerprint(other)).not.toBe(requestFingerprint(request));
  });
});

describe("canonicalJson", () => {
  it("sorts keys at every depth, keeps array order, and leaves out undefined members", () => {
    expect(canonicalJson({ b: [{ d: 1, c: null }, 2], a: "x", u: undefined })).toBe('{"a":"x","b":[{"c":null,"d":1},2]}');
  });
});

describe("touchesPath", () => {
  const changes: Change[] = [
    { op: "put", path: "src/app/main.ts", sha256: A, size: 1 },
    { op: "delete", path: "README" },
  ];

  it.each([
    ["the file itself", "README", true],
    ["a directory it is under", "src", true],
    ["a deeper directory", "src/app", true],
    ["the exact path", "src/app/main.ts", true],
    ["a sibling with the same prefix", "src/ap", false],
    ["a path under the file", "README/x", false],
    ["another path", "docs", false],
  ])("matches %s: %s", (_name, path, matches) => {
    expect(touchesPath(changes, path)).toBe(matches);
  });
});

describe("fileDirClashes (a file and a directory under one name, docs/api.md v1.3)", () => {
  const put = (path: string): Change => ({ op: "put", path, sha256: A, size: 1 });
  const del = (path: string): Change => ({ op: "delete", path });
  const files = (...paths: string[]) => new Map(paths.map((p) => [p, { sha256: B, size: 2 }]));
  const clashes = (changes: Change[], now: Map<string, { sha256: string; size: number }>) =>
    fileDirClashes(
      changes,
      now,
      filesUnder(
        now,
        changes.flatMap((c) => (c.op === "put" ? [c.path] : [])),
      ),
    ).map((c) => [c.path, c.clash]);

  it.each<[string, Change[], string[], (string | undefined)[][]]>([
    ["a file under a file", [put("x/y")], ["x"], [["x/y", "x"]]],
    ["a file under a file deeper up", [put("x/y/z")], ["x"], [["x/y/z", "x"]]],
    ["a file over a directory", [put("x")], ["x/y"], [["x", "x/y"]]],
    [
      "both in one commit",
      [put("x"), put("x/y")],
      [],
      [
        ["x", "x/y"],
        ["x/y", "x"],
      ],
    ],
    ["the file deleted in the same commit", [del("x"), put("x/y")], ["x"], []],
    ["the directory emptied in the same commit", [del("x/y"), del("x/z"), put("x")], ["x/y", "x/z"], []],
    ["the directory not quite emptied", [del("x/y"), put("x")], ["x/y", "x/z"], [["x", "x/z"]]],
    ["a sibling with the same prefix", [put("x.txt/y"), put("xy")], ["x", "x-1/a"], []],
    ["a put of a file that stays a file", [put("x")], ["x", "xy/z"], []],
    ["a delete never clashes", [del("x")], ["x", "x/y"], []],
  ])("%s", (_name, changes, now, expected) => {
    expect(clashes(changes, files(...now))).toEqual(expected);
  });

  it("is a 409 conflict in checkCommit, each clashing put named once with what it holds now", () => {
    const outcome = checkCommit([put("here.txt/y")], { sizes: new Map([[A, 1]]), current, under: new Map(), version: 7 });
    expect(outcome).toEqual({
      kind: "conflict",
      version: 7,
      conflicts: [{ path: "here.txt/y", sha256: null, size: null, clash: "here.txt" }],
    });
  });
});

describe("chainHash (docs/api.md v1.3)", () => {
  it("hashes the previous chain hash and the changes as canonical JSON, without expect", () => {
    const changes: Change[] = [
      { op: "put", path: "ä/a", sha256: A, size: 1, expect: B },
      { op: "delete", path: "b", expect: null },
    ];
    expect(canonicalChanges(changes)).toBe(`[{"op":"put","path":"ä/a","sha256":"${A}","size":1},{"op":"delete","path":"b"}]`);
    expect(chainHash(ZERO_CHAIN, changes)).toBe(
      chainHash(
        ZERO_CHAIN,
        changes.map(({ expect: _, ...c }) => c as Change),
      ),
    );
    expect(chainHash(ZERO_CHAIN, changes)).not.toBe(chainHash(chainHash(ZERO_CHAIN, []), changes));
    expect(chainHash(ZERO_CHAIN, changes)).toMatch(/^[0-9a-f]{64}$/);
  });
});
