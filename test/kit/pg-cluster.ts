// Throwaway PostgreSQL clusters for the tests (bench/lib/pg-cluster.mjs). Without the PostgreSQL
// binaries the tests that use one fail, never skip.

import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { QueryResult, QueryResultRow } from "pg";
import { beforeAll } from "vitest";
import { startCluster, type PgCluster } from "../../bench/lib/pg-cluster.mjs";
import { REGISTRY_ENV } from "./pg-clusters.global.js";

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
  if (!registry)
    throw new Error(`${REGISTRY_ENV} is not set: run the tests through vitest.config.ts (its globalSetup stops the shared clusters)`);
  const cluster = await startCluster();
  // Its connections are kept for the worker's life (the pool would close them after 10 s idle):
  // the worker's files use them now and then, and each new one costs the cluster ~27 ms of CPU.
  cluster.admin.options.idleTimeoutMillis = 0;
  writeFileSync(path.join(registry, randomUUID()), cluster.dir);
  return cluster;
}

/**
 * Runs `sql` on the schema of `databaseUrl` (a `freshSchemaUrl`) in a transaction of the cluster's
 * admin pool, whose connections are already open: a connection of the test's own costs PostgreSQL
 * about 27 ms of CPU to start, more than the queries a test looks at its store with.
 */
export async function querySchema<R extends QueryResultRow = QueryResultRow>(
  cluster: PgCluster,
  databaseUrl: string,
  sql: string,
  params?: unknown[],
): Promise<QueryResult<R>> {
  const client = await cluster.admin.connect();
  let failed: Error | undefined;
  try {
    await client.query("BEGIN");
    await client.query(`SET LOCAL search_path TO ${schemaOf(databaseUrl)}`);
    const result = await client.query<R>(sql, params);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    failed = error as Error;
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release(failed); // a connection that failed (the cluster stopped) is not reused
  }
}

/** The schema a `freshSchemaUrl` puts its connections in (its `-c search_path=…` option). */
function schemaOf(databaseUrl: string): string {
  const options = new URL(databaseUrl).searchParams.get("options") ?? "";
  const schema = /^-c search_path=(\w+)$/.exec(options)?.[1];
  if (!schema) throw new Error(`not a URL of freshSchemaUrl(): ${databaseUrl}`);
  return schema;
}
