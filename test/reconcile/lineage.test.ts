import { describe, expect, it } from "vitest";
import { judgeLineage, type HistoryPoint, type Lineage } from "../../src/reconcile/lineage.js";

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
