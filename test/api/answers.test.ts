import { describe, expect, it } from "vitest";
import { conflictEntries, parseFeed, type FeedFault } from "../../src/api/answers.js";
import { listingRefusals } from "../../src/reconcile/remote-view.js";

const SHA = "a".repeat(64);
const put = (path: string) => ({ op: "put", path, sha256: SHA, size: 1 });
const commit = (version: number, ...changes: object[]) => ({ version, time: "2026-11-25T10:00:00Z", changes });
const fail = (why: string) => new Error(why);

describe("parseFeed: a commit feed is checked, never looped on", () => {
  it("takes commits one version after another from since + 1", () => {
    const feed = parseFeed({ version: 9, commits: [commit(4, put("a")), commit(5, { op: "delete", path: "a" })] }, 3, fail);
    expect(feed.commits.map((c) => c.version)).toEqual([4, 5]);
    expect(feed.version).toBe(9);
  });

  it("with a path filter (only the commits that touched it), versions may skip but never go back or repeat", () => {
    const feed = parseFeed({ version: 9, commits: [commit(5, put("a")), commit(8, put("a"))] }, 3, fail, { filtered: true });
    expect(feed.commits.map((c) => c.version)).toEqual([5, 8]);
    expect(() => parseFeed({ version: 9, commits: [commit(5), commit(5)] }, 3, fail, { filtered: true })).toThrow(
      "go back, repeat or skip",
    );
    expect(() => parseFeed({ version: 9, commits: [commit(3)] }, 3, fail, { filtered: true })).toThrow("go back, repeat or skip");
  });

  it.each([
    [
      "versions that go back",
      { version: 9, commits: [commit(4), commit(3)] },
      "go back, repeat or skip (v3 where v5 was due)",
      "contradiction",
    ],
    ["a version repeated", { version: 9, commits: [commit(4), commit(4)] }, "go back, repeat or skip", "contradiction"],
    ["a gap", { version: 9, commits: [commit(5)] }, "go back, repeat or skip (v5 where v4 was due)", "contradiction"],
    [
      "a head older than its commits",
      { version: 4, commits: [commit(4), commit(5)] },
      "the head v4 is older than the commits listed (up to v5)",
      "contradiction",
    ],
    ["a head older than since", { version: 2, commits: [] }, "the head went back from v3 to v2", "contradiction"],
    [
      "a change that is neither put nor delete",
      { version: 9, commits: [commit(4, { op: "move", path: "a" })] },
      "not a put or a delete",
      "malformed",
    ],
    ["not a feed", { commits: "no" }, "not { version, commits }", "malformed"],
  ])("refuses %s", (_, json, message, fault) => {
    const faults: FeedFault[] = [];
    expect(() => parseFeed(json as Record<string, unknown>, 3, (why, kind) => (faults.push(kind), new Error(why)))).toThrow(message);
    expect(faults).toEqual([fault]);
  });

  it("the same head as since, with no commits, is no news", () => {
    expect(parseFeed({ version: 3, commits: [] }, 3, fail)).toEqual({ version: 3, commits: [] });
  });
});

describe("conflictEntries: the body of a 409", () => {
  it("reads each path's current hash, null for an absent one", () => {
    expect(
      conflictEntries({
        conflicts: [
          { path: "a", sha256: SHA, size: 1 },
          { path: "b", sha256: null, size: null },
        ],
      }),
    ).toEqual([
      { path: "a", sha256: SHA, size: 1 },
      { path: "b", sha256: null, size: null },
    ]);
  });

  it("keeps the other path of a file/directory clash (v1.3): the client must learn it to make a copy (simulation seed 8: the same put sent until it gave up)", () => {
    expect(conflictEntries({ conflicts: [{ path: "x/y", sha256: null, size: null, clash: "x" }] })).toEqual([
      { path: "x/y", sha256: null, size: null, clash: "x" },
    ]);
  });

  it("is undefined for a body that is not one", () => {
    expect(conflictEntries({ conflicts: [{ path: "a", sha256: "nope" }] })).toBeUndefined();
    expect(conflictEntries({ error: "conflict" })).toBeUndefined();
  });
});

describe("listingRefusals: a hostile listing is refused by name", () => {
  it("the same path twice: refused", () => {
    expect(listingRefusals(["a.txt", "a.txt", "b.txt"])).toEqual(new Map([["a.txt", "listed 2 times"]]));
  });

  it("a file that is also a directory: both refused", () => {
    const refused = listingRefusals(["d", "d/x.txt", "e/f"]);
    expect([...refused.keys()]).toEqual(["d/x.txt", "d"]);
    for (const why of refused.values())
      expect(why).toMatch(/^d is listed as a file and as a directory \(.*\): neither is synced until one of them goes from the remote$/);
  });
});
