// Tokens and device logins of the PostgreSQL store: every replica reads them at every request, so a
// revoke (by any process) and an approval (on any replica) are seen at once.

import type { Pool } from "pg";
import {
  parseTokenRecord,
  type CredentialStore,
  type DeviceLoginChange,
  type DeviceLoginKey,
  type DeviceLoginRecord,
  type TokenRecord,
} from "../credentials.js";
import { guarded, transaction } from "./db.js";

interface TokenRow {
  id: string;
  sha256: string;
  projects: string[];
  access: "read" | "write";
  created: Date;
  expires: Date | null;
  revoked: Date | null;
  parent_id: string | null;
  parent_sha256: string | null;
}

const TOKEN_COLUMNS = "id, sha256, projects, access, created, expires, revoked, parent_id, parent_sha256";

export class PgCredentials implements CredentialStore {
  /** `ready` throws while the schema is not migrated (answered 503). */
  constructor(
    private readonly pool: Pool,
    private readonly ready: () => void,
  ) {}

  async addToken(record: TokenRecord): Promise<void> {
    this.ready();
    await guarded(() =>
      this.pool.query(`INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
        record.id,
        record.sha256,
        record.projects,
        record.access,
        new Date(record.created),
        dateOrNull(record.expires),
        dateOrNull(record.revoked),
        record.parent?.id ?? null,
        record.parent?.sha256 ?? null,
      ]),
    );
  }

  async tokenByHash(sha256: string): Promise<TokenRecord | undefined> {
    this.ready();
    const { rows } = await guarded(() => this.pool.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE sha256 = $1`, [sha256]));
    return rows[0] && parseTokenRecord(recordOf(rows[0]));
  }

  async tokens(): Promise<{ tokens: TokenRecord[]; damaged: number }> {
    this.ready();
    const { rows } = await guarded(() => this.pool.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created, id`));
    // A date past what JavaScript holds (a row written by hand) reads as NaN: that record alone is left out.
    const tokens = rows.flatMap((row) => parseTokenRecord(recordOf(row)) ?? []);
    return { tokens, damaged: rows.length - tokens.length };
  }

  async revokeToken(id: string, at: number): Promise<"revoked" | "unknown"> {
    this.ready();
    const { rowCount } = await guarded(() =>
      this.pool.query("UPDATE tokens SET revoked = coalesce(revoked, $2) WHERE id = $1", [id, new Date(at)]),
    );
    return rowCount ? "revoked" : "unknown";
  }

  async addDeviceLogin(record: DeviceLoginRecord, now: number, max: number): Promise<"added" | "full"> {
    this.ready();
    return transaction(this.pool, async (client) => {
      await client.query("DELETE FROM device_logins WHERE expires_at < $1", [new Date(now)]);
      // Replicas adding at once may pass the bound by a few: it only has to stop a flood.
      const { rows } = await client.query<{ waiting: string }>("SELECT count(*) AS waiting FROM device_logins");
      if (Number(rows[0]!.waiting) >= max) return "full";
      await client.query("INSERT INTO device_logins (device_hash, user_hash, expires_at, login) VALUES ($1, $2, $3, $4)", [
        record.deviceHash,
        record.userHash,
        new Date(record.expiresAt),
        JSON.stringify(record),
      ]);
      return "added";
    });
  }

  /** One transaction holding the login's row lock: two replicas never both hand out its token. */
  async changeDeviceLogin<T>(key: DeviceLoginKey, change: (login: DeviceLoginRecord | undefined) => DeviceLoginChange<T>): Promise<T> {
    this.ready();
    const [column, value] = "deviceHash" in key ? ["device_hash", key.deviceHash] : ["user_hash", key.userHash];
    return transaction(this.pool, async (client) => {
      const { rows } = await client.query<{ login: DeviceLoginRecord }>(`SELECT login FROM device_logins WHERE ${column} = $1 FOR UPDATE`, [
        value,
      ]);
      const login = rows[0]?.login;
      const { next, result } = change(login);
      if (next === null && login) await client.query("DELETE FROM device_logins WHERE device_hash = $1", [login.deviceHash]);
      if (next) await client.query("UPDATE device_logins SET login = $2 WHERE device_hash = $1", [next.deviceHash, JSON.stringify(next)]);
      return result;
    });
  }
}

function recordOf(row: TokenRow): TokenRecord {
  const record: TokenRecord = {
    id: row.id,
    sha256: row.sha256,
    projects: row.projects,
    access: row.access,
    created: row.created.getTime(),
  };
  if (row.expires) record.expires = row.expires.getTime();
  if (row.revoked) record.revoked = row.revoked.getTime();
  if (row.parent_id !== null && row.parent_sha256 !== null) record.parent = { id: row.parent_id, sha256: row.parent_sha256 };
  return record;
}

function dateOrNull(ms: number | undefined): Date | null {
  return ms === undefined ? null : new Date(ms);
}
