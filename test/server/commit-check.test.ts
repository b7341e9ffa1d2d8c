import { describe, expect, it } from "vitest";
import type { Change } from "../../src/api/types.js";
import {
  canonicalJson,
  checkCommit,
  checkExpectations,
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
    ["a put expecting absence of a present path", { op: "put", path: "here.txt", sha256: C, size: 3, expect: null }, { sha256: A, size: 1 }],
    ["a put expecting a hash at an absent path", { op: "put", path: "new.txt", sha256: C, size: 3, expect: A }, { sha256: null, size: null }],
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
  const stored = { sizes, current, version: 7 };

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
  const request = { changes: [{ op: "put" as const, path: "a", sha256: A, size: 1, expect: null }], source: { agent: "x", sessionId: "s" } };

  it("is the same for the same JSON with keys in another order", () => {
    const reordered = JSON.parse('{"source":{"sessionId":"s","agent":"x"},"changes":[{"expect":null,"size":1,"sha256":"' + A + '","path":"a","op":"put"}]}');
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
  const changes: Change[] = [{ op: "put", path: "src/app/main.ts", sha256: A, size: 1 }, { op: "delete", path: "README" }];

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
