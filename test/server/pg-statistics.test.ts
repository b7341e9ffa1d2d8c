import { describe, expect, it } from "vitest";
import { testServer } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

// A first push of many files grows file_history by a thousand rows a commit, faster than
// autovacuum comes by (the test cluster runs none): without statistics the planner reads each
// commit's directory check with the unique index and filters every current file once per path
// (quadratic: 12 s a commit at 20,000 files). Large commits analyze the table once it is stale.
describe("--db store", () => {
  it("analyzes file_history while large commits grow it", async () => {
    const t = await testServer({ pg });
    const reltuples = async () =>
      Number((await t.query<{ n: number }>("SELECT reltuples AS n FROM pg_class WHERE oid = 'file_history'::regclass"))[0]!.n);
    const blob = await t.upload("one file\n");
    let commits = 0;
    // Bounded: the counters the check reads are flushed about once a second.
    while ((await reltuples()) < 500 && commits < 12) {
      const changes = Array.from({ length: 300 }, (_, i) => ({ op: "put", path: `c${commits}/f${i}.txt`, ...blob }));
      expect((await t.commit({ changes })).status).toBe(200);
      commits++;
    }
    expect(await reltuples()).toBeGreaterThanOrEqual(500);
  }, 60_000);
});
