// The chain hashes of API v1.3 (src/api/chain.ts) in PostgreSQL: one per commit, in its `chain`
// column (migration 5). Commits written before it, or by a replica of an older release, have
// none yet: they are computed from the last one known, in version order, and stored.

import type { ClientBase, Pool } from "pg";
import { chainHash, ZERO_CHAIN } from "../../api/chain.js";
import type { Change } from "../../api/types.js";

type Db = Pool | ClientBase;

/** Commits hashed per query while filling. */
const FILL_PAGE = 1000;

/** The chain hash at `version` of the project (ZERO_CHAIN at 0), filling in what is missing up to it. */
export async function chainAt(db: Db, projectId: string, version: number): Promise<string> {
  if (version === 0) return ZERO_CHAIN;
  const { rows } = await db.query<{ chain: string | null }>("SELECT chain FROM commits WHERE project = $1 AND version = $2", [
    projectId,
    version,
  ]);
  if (rows[0]?.chain) return rows[0].chain;
  await fillChains(db, projectId);
  const again = await db.query<{ chain: string }>("SELECT chain FROM commits WHERE project = $1 AND version = $2", [projectId, version]);
  return again.rows[0]!.chain;
}

/** Computes and stores the missing chain hashes of one project (or of every project), oldest first. */
export async function fillChains(db: Db, projectId?: string): Promise<void> {
  const { rows } = await db.query<{ project: string; first: string }>(
    "SELECT project, min(version) AS first FROM commits WHERE chain IS NULL AND ($1::text IS NULL OR project = $1) GROUP BY project",
    [projectId ?? null],
  );
  for (const { project, first } of rows) {
    const from = Number(first);
    const before = await db.query<{ chain: string }>("SELECT chain FROM commits WHERE project = $1 AND version = $2", [project, from - 1]);
    let previous = from === 1 ? ZERO_CHAIN : before.rows[0]!.chain;
    for (let version = from; ; version += FILL_PAGE) {
      const page = await db.query<{ version: string; changes: Change[] }>(
        "SELECT version, changes FROM commits WHERE project = $1 AND version >= $2 ORDER BY version LIMIT $3",
        [project, version, FILL_PAGE],
      );
      if (page.rows.length === 0) break;
      const chains = page.rows.map((row) => (previous = chainHash(previous, row.changes)));
      await db.query(
        "UPDATE commits c SET chain = u.chain FROM unnest($2::bigint[], $3::text[]) AS u(version, chain) WHERE c.project = $1 AND c.version = u.version",
        [project, page.rows.map((row) => row.version), chains],
      );
    }
  }
}
