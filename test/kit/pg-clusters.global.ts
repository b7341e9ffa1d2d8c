// vitest globalSetup: the PostgreSQL clusters a test worker shares between its files
// (test/kit/pg-cluster.ts) outlive the files, and a worker ends without running exit handlers.
// Each is listed in a directory made here, and stopped and removed here when the run ends.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stopClusterIn } from "../../bench/lib/pg-cluster.mjs";

export const REGISTRY_ENV = "USPARK_TEST_PG_CLUSTERS";

export function setup(): void {
  // Set before the workers start: they inherit it.
  process.env[REGISTRY_ENV] = mkdtempSync(path.join(os.tmpdir(), "uspark-test-pg-clusters-"));
}

export async function teardown(): Promise<void> {
  const registry = process.env[REGISTRY_ENV];
  if (!registry) return;
  for (const entry of readdirSync(registry)) await stopClusterIn(readFileSync(path.join(registry, entry), "utf8")).catch(() => undefined);
  rmSync(registry, { recursive: true, force: true });
}
