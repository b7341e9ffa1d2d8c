import { describe, expect, it } from "vitest";
import { emptyBase, mergeBase, parseState, withBase, baseIn, type Base, type BaseEntry } from "../../src/reconcile/base.js";
import { headIsMirror, mergedMirror, mirrorOf, sameFiles, type RemotePicture } from "../../src/reconcile/mirror.js";

/**
 * The mirror point (src/reconcile/mirror.ts): where the remote held exactly the base's files, so a
 * command whose server still has that head takes the base as the listing. Each decision is a truth
 * table; a wrong "yes" would hide a remote change from status, push and pull.
 */

const A = "a".repeat(64);
const B = "b".repeat(64);
const C1 = "1".repeat(64);
const C2 = "2".repeat(64);
const KEY = { apiUrl: "http://127.0.0.1:1", projectId: "p" };

const entry = (sha256: string, size = 4): BaseEntry => ({ sha256, size, mtimeMs: 1, ino: 1, ctimeMs: 1, dev: 1, mode: 0o100644 });
const files = (pairs: Record<string, BaseEntry>) => new Map(Object.entries(pairs));
const picture = (over: Partial<RemotePicture> & { files: RemotePicture["files"] }): RemotePicture => ({
  version: 7,
  chain: C1,
  exact: true,
  ...over,
});

describe("mirrorOf: the point a base has with the view's picture", () => {
  const base = files({ "a.txt": entry(A), "b.txt": entry(B, 9) });
  const same = () =>
    new Map([
      ["a.txt", { sha256: A, size: 4 }],
      ["b.txt", { sha256: B, size: 9 }],
    ]);
  const rows: [string, RemotePicture, boolean][] = [
    ["the same files, an exact picture with a chain hash", picture({ files: same() }), true],
    ["not exact (a 409's paths, a commit past a gap)", picture({ files: same(), exact: false }), false],
    ["no chain hash (an API 1.2 server)", picture({ files: same(), chain: undefined }), false],
    ["one hash differs", picture({ files: new Map([...same(), ["b.txt", { sha256: A, size: 9 }]]) }), false],
    ["one size differs", picture({ files: new Map([...same(), ["b.txt", { sha256: B, size: 8 }]]) }), false],
    ["a remote path the base lacks", picture({ files: new Map([...same(), ["c.txt", { sha256: A, size: 4 }]]) }), false],
    ["a base path the remote lacks", picture({ files: new Map([["a.txt", { sha256: A, size: 4 }]]) }), false],
  ];
  it.each(rows)("%s", (_, pic, holds) => {
    expect(mirrorOf(base, pic)).toEqual(holds ? { version: 7, chain: C1 } : undefined);
  });

  it("never holds for an entry whose size is unknown (-1: the seeded listing would carry it)", () => {
    const unknown = files({ "a.txt": { sha256: A, size: -1, mtimeMs: -1, ino: -1 } });
    expect(sameFiles(unknown, new Map([["a.txt", { sha256: A, size: -1 }]]))).toBe(false);
  });
});

describe("headIsMirror: the server's head is the point", () => {
  const point = { version: 7, chain: C1 };
  const rows: [string, { version: number; chain?: string; commits: number }, boolean][] = [
    ["same version, same chain hash, no commit after it", { version: 7, chain: C1, commits: 0 }, true],
    ["a commit after it (another writer)", { version: 8, chain: C2, commits: 1 }, false],
    ["same version, another chain hash (another history)", { version: 7, chain: C2, commits: 0 }, false],
    ["same version, no chain hash (a server without history)", { version: 7, commits: 0 }, false],
    ["an older head (restored from a backup)", { version: 5, chain: C1, commits: 0 }, false],
  ];
  it.each(rows)("%s", (_, head, taken) => expect(headIsMirror(point, head)).toBe(taken));
});

describe("a save's merge keeps a mirror point only where it still holds", () => {
  const synced = (over: Partial<Base> = {}): Base => ({
    ...emptyBase(KEY),
    version: 7,
    chain: C1,
    files: files({ "a.txt": entry(A), "b.txt": entry(B) }),
    mirror: { version: 7, chain: C1 },
    ...over,
  });

  it("the saver's point, when the merged files are the saver's", () => {
    expect(mergeBase(undefined, synced(), ["a.txt", "b.txt"]).mirror).toEqual({ version: 7, chain: C1 });
  });

  it("the stored point, when the saver changed no file (a conflict, a version, a stat refresh at the same hash and size)", () => {
    const mine = { ...synced(), mirror: undefined, files: files({ "a.txt": { ...entry(A), mtimeMs: 2 }, "b.txt": entry(B) }) };
    expect(mergeBase(synced(), mine, ["a.txt"]).mirror).toEqual({ version: 7, chain: C1 });
  });

  it("none, when the saver moved a file and vouches for nothing", () => {
    const mine = { ...synced(), mirror: undefined, files: files({ "a.txt": entry(B), "b.txt": entry(B) }) };
    expect(mergeBase(synced(), mine, ["a.txt"]).mirror).toBeUndefined();
  });

  it("none, when another process's entries merged in make the files neither the saver's nor the stored ones", () => {
    // Another process saved c.txt (its base moved on) after this one's point was made without it.
    const stored = synced({ files: files({ "a.txt": entry(A), "b.txt": entry(B), "c.txt": entry(A) }), mirror: undefined });
    const merged = mergeBase(stored, synced(), ["a.txt"]);
    expect([...merged.files.keys()].sort()).toEqual(["a.txt", "b.txt", "c.txt"]);
    expect(merged.mirror).toBeUndefined();
    expect(mergedMirror(merged.files, [{ mirror: { version: 7, chain: C1 }, files: synced().files }])).toBeUndefined();
  });

  it("is written and read back with the state file, and a malformed one makes the file unusable", () => {
    const state = withBase(undefined, synced(), new Date(0));
    expect(baseIn(parseState(JSON.stringify(state)), KEY)?.mirror).toEqual({ version: 7, chain: C1 });
    const bad = JSON.parse(JSON.stringify(state));
    bad.projects[0].mirror = [7];
    expect(() => parseState(JSON.stringify(bad))).toThrow(/mirror/);
  });
});
