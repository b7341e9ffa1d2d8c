// The connection pool, transactions, and which database errors mean "unreachable, retry later".

import { redactCredentials } from "../../report/reporter.js";
import type { Pool, PoolClient } from "pg";
import { requireCjs } from "../../util/cjs.js";
import { StoreSetupError, StoreUnavailableError } from "../store.js";
import { errorText } from "../../errors/text.js";

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "EAI_AGAIN"]);

/** SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57P (operator intervention). */
function isUnreachable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  if (code && (CONNECTION_CODES.has(code) || /^(08|53|57P)/.test(code))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
    message ?? "",
  );
}

/** Runs `work`, turning "database unreachable" into StoreUnavailableError (answered 503). */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUnreachable(error)) throw new StoreUnavailableError(`database unreachable: ${errorText(error)}`);
    throw error;
  }
}

/**
 * Runs `work` on one connection of the pool. A connection lost while checked out is reported as
 * an 'error' event (the pool only listens on idle ones); unheard, it would end the process. The
 * query in flight rejects with it anyway, and the connection is not reused.
 */
export async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost = false;
  const onError = () => {
    lost = true;
  };
  client.on("error", onError);
  try {
    return await work(client);
  } catch (error) {
    lost ||= isUnreachable(error);
    throw error;
  } finally {
    client.off("error", onError);
    client.release(lost);
  }
}

/** Runs `work` in one transaction on one connection: committed if it returns, rolled back if it throws. */
export function transaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return guarded(() => withClient(pool, (client) => inTransaction(client, () => work(client))));
}

/** Runs `work` between BEGIN and COMMIT on `client`; ROLLBACK if it throws. */
export async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

export function createPool(url: string, onError: (error: Error) => void): Pool {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreSetupError(`invalid database URL: ${redactCredentials(url)}`);
  }
  if (!/^postgres(ql)?:$/.test(parsed.protocol)) {
    throw new StoreSetupError(`the database URL must start with postgres:// (got ${redactCredentials(url)})`);
  }
  const { Pool } = requireCjs("pg") as typeof import("pg");
  const pool = new Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 10_000 });
  // An idle connection that breaks (database restarted) must not take the process down.
  pool.on("error", onError);
  return pool;
}
