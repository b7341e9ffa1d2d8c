// Throwaway PostgreSQL clusters for the tests (bench/lib/pg-cluster.mjs). Without the PostgreSQL
// binaries the tests that use one fail, never skip.

import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll } from "vitest";
import { startCluster, type PgCluster } from "../../bench/lib/pg-cluster.mjs";
import { REGISTRY_ENV } from "../helpers/pg-clusters.global.js";

export type { PgCluster };

/** The worker's cluster, started by its first user; the run's teardown stops it. */
let shared: Promise<PgCluster> | undefined;

/**
 * The test worker's one cluster, shared by the files it runs one after another: each test asks
 * for a schema of its own (`freshSchemaUrl`), so they never see each other's data. A cluster
 * costs about a second of CPU to start; files only need schemas. A file may stop the cluster,
 * end its connections or restart it (no other file runs in the worker meanwhile), as long as it
 * leaves it running.
 */
export function usePgCluster(): () => PgCluster {
  let cluster: PgCluster | undefined;
  beforeAll(async () => {
    shared ??= startShared();
    cluster = await shared;
  }, 60_000);
  return () => started(cluster);
}

function started(cluster: PgCluster | undefined): PgCluster {
  if (!cluster) throw new Error("the PostgreSQL cluster did not start (see the beforeAll error)");
  return cluster;
}

async function startShared(): Promise<PgCluster> {
  const registry = process.env[REGISTRY_ENV];
  if (!registry) throw new Error(`${REGISTRY_ENV} is not set: run the tests through vitest.config.ts (its globalSetup stops the shared clusters)`);
  const cluster = await startCluster();
  writeFileSync(path.join(registry, randomUUID()), cluster.dir);
  return cluster;
}
