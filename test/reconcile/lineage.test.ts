import { describe, expect, it } from "vitest";
import { chainHash, ZERO_CHAIN } from "../../src/api/chain.js";
import type { Change, CommitFeed, Listing } from "../../src/api/types.js";
import { checkLineage, judgeLineage, RewoundError, type HistoryPoint, type Lineage } from "../../src/reconcile/lineage.js";
import { RemoteView } from "../../src/reconcile/remote-view.js";
import { ProjectRemote, type ProjectApi } from "../../src/transfer/project-remote.js";
import { RetryingCaller } from "../../src/transfer/retry.js";
import { captureReporter } from "../kit/sync.js";

/** The decision of src/reconcile/lineage.ts as a truth table: recorded (version, chain), the server's head, its chain then. */

const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);

describe("judgeLineage", () => {
  it.each<[string, HistoryPoint, HistoryPoint, string | undefined, Lineage["kind"]]>([
    ["nothing recorded", { version: 0 }, { version: 5, chain: A }, undefined, "extends"],
    ["the same head", { version: 5, chain: A }, { version: 5, chain: A }, undefined, "extends"],
    ["an older head", { version: 8, chain: A }, { version: 5, chain: B }, undefined, "rewound"],
    ["an older head, no chain recorded (a state file of v0.3)", { version: 8 }, { version: 5, chain: B }, undefined, "rewound"],
    ["an older head of a v1.2 server", { version: 8, chain: A }, { version: 5 }, undefined, "rewound"],
    ["the same version, another chain", { version: 5, chain: A }, { version: 5, chain: B }, undefined, "rewound"],
    ["a newer head: the chain then is needed", { version: 5, chain: A }, { version: 9, chain: C }, undefined, "ask"],
    ["a newer head holding the recorded point", { version: 5, chain: A }, { version: 9, chain: C }, A, "extends"],
    ["a newer head of another history", { version: 5, chain: A }, { version: 9, chain: C }, B, "rewound"],
    ["a v1.2 server, not older", { version: 5, chain: A }, { version: 5 }, undefined, "unchecked"],
    ["no chain recorded, a newer head", { version: 5 }, { version: 9, chain: C }, undefined, "extends"],
  ])("%s", (_name, recorded, head, then, kind) => {
    expect(judgeLineage(recorded, head, then).kind).toBe(kind);
  });

  it("names both versions when it refuses", () => {
    const verdict = judgeLineage({ version: 8, chain: A }, { version: 5, chain: B });
    expect(verdict).toEqual({ kind: "rewound", why: expect.stringMatching(/v5.*v8/) });
  });
});

describe("the chain hashes a session reads", () => {
  const put = (path: string, sha: string): Change => ({ op: "put", path, sha256: sha, size: 1 });
  const c1 = chainHash(ZERO_CHAIN, [put("a", A)]);

  function viewOf(answers: { listing: Listing; feeds: CommitFeed[] }) {
    const { reporter, events } = captureReporter();
    const api = {
      listFiles: async () => answers.listing,
      commitFeed: async () => answers.feeds.shift()!,
      commit: async () => ({ version: 0 }),
    };
    const remote = new ProjectRemote(api as unknown as ProjectApi, new RetryingCaller({ report: reporter, host: "sim" }), {
      concurrency: 1,
      report: reporter,
    });
    return { view: new RemoteView(remote, reporter), remote, report: reporter, events };
  }

  it("follows each commit's chain hash from the one before; a feed whose hashes do not follow is a server that contradicts itself", async () => {
    const signal = new AbortController().signal;
    const c2 = chainHash(c1, [put("b", B)]);
    const good = viewOf({
      listing: { version: 1, files: [], api: "1.2", chain: c1 },
      feeds: [{ version: 2, chain: c2, commits: [{ version: 2, time: "", changes: [put("b", B)], chain: c2 }] }],
    });
    await good.view.ensure(signal);
    await good.view.refresh(signal);
    expect([good.view.version, good.view.chain]).toEqual([2, c2]);
    const bad = viewOf({
      listing: { version: 1, files: [], api: "1.2", chain: c1 },
      feeds: [{ version: 2, chain: C, commits: [{ version: 2, time: "", changes: [put("b", B)], chain: C }] }],
    });
    await bad.view.ensure(signal);
    await expect(bad.view.refresh(signal)).rejects.toThrow(/contradicts itself: the chain hash of v2/);
  });

  it("says once that a v1.2 server's history cannot be checked, and still refuses its older head", async () => {
    const signal = new AbortController().signal;
    const old = viewOf({ listing: { version: 3, files: [], api: "1.2" }, feeds: [] });
    await old.view.ensure(signal);
    expect(await checkLineage({ version: 3, chain: A }, old, signal)).toBe(false);
    expect(await checkLineage({ version: 2, chain: A }, old, signal)).toBe(false);
    expect(old.events("old-api").filter((r) => r.level === "warn")).toHaveLength(1);
    await expect(checkLineage({ version: 5, chain: A }, old, signal)).rejects.toThrow(RewoundError);
  });
});
