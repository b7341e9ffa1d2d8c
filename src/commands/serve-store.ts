import path from "node:path";
import { defaultServeData, UsageError } from "../config/config.js";

/** Where `uspark serve` and `uspark serve token` keep projects and tokens: their --data and --db. */
export interface StoreFlags {
  data?: string;
  db?: string;
}

/**
 * The store `--data` or `--db` (or USPARK_DATABASE_URL) names, at most one; with neither, the
 * default directory (`uspark serve` and `uspark serve token` alike: a first try needs no flag).
 */
export function storeOf(flags: StoreFlags): { dataDir?: string; databaseUrl?: string; defaultStore?: true } {
  const databaseUrl = flags.db ?? (flags.data === undefined ? process.env.USPARK_DATABASE_URL || undefined : undefined);
  if (flags.data !== undefined && databaseUrl !== undefined)
    throw new UsageError("give one of --data <dir> and --db <postgres-url>, not both");
  if (databaseUrl !== undefined) return { databaseUrl };
  if (flags.data !== undefined) return { dataDir: path.resolve(flags.data) };
  return { dataDir: defaultServeData(), defaultStore: true };
}
