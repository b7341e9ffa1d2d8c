import type { Pool } from "pg";

export interface PgCluster {
  /** postgres://… of the cluster's `postgres` database. */
  url: string;
  port: number;
  /** Its temp dir (data, socket, log): what stopClusterIn() takes. */
  dir: string;
  /** A pool on the cluster, closed by destroy(). */
  admin: Pool;
  /** A URL whose connections use a fresh, empty schema: one isolated store per call. */
  freshSchemaUrl(): Promise<string>;
  /** Stops the server at once (like a crash) / starts it again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

export function startCluster(): Promise<PgCluster>;
export function schemasOn(url: string): Pick<PgCluster, "admin" | "freshSchemaUrl">;
export function stopClusterIn(dir: string, options?: { removeDir?: boolean }): Promise<void>;
