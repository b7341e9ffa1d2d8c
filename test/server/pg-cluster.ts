// One throwaway PostgreSQL cluster per test file (bench/lib/pg-cluster.mjs). Without the
// PostgreSQL binaries the tests that use it fail, never skip.

import { afterAll, beforeAll } from "vitest";
import { startCluster, type PgCluster } from "../../bench/lib/pg-cluster.mjs";

export type { PgCluster };

/** Starts a cluster before the calling file's tests and removes it after them. */
export function usePgCluster(): () => PgCluster {
  let cluster: PgCluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(() => cluster?.destroy(), 30_000);
  return () => {
    if (!cluster) throw new Error("the PostgreSQL cluster did not start (see the beforeAll error)");
    return cluster;
  };
}
