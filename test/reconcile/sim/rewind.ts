import { RewoundError } from "../../../src/reconcile/lineage.js";
import type { MemoryServer, ServerSnapshot } from "./memory-server.js";
import type { Scheduler } from "./scheduler.js";
import type { Writer } from "./writer.js";

/**
 * The server restored from a backup (docs/api.md, v1.3), after the writers settled: each writer
 * starts again from its state file, and one that last synced past the backup must refuse the
 * server before doing anything; then each takes the way out (uspark push --onto-rewound), all
 * settle, and no file a writer held as the remote held it before the restore may be lost.
 */

type Settle = (writers: Writer[], scheduler: Scheduler, server: MemoryServer, violations: string[]) => Promise<void>;
type Check = (run: {
  writers: Writer[];
  held: { writer: Writer; files: Map<string, string> }[];
  server: MemoryServer;
  acknowledged: [];
  violations: string[];
}) => Promise<void>;

export async function rewindPhase(run: {
  writers: Writer[];
  server: MemoryServer;
  scheduler: Scheduler;
  backup: ServerSnapshot;
  violations: string[];
  settle: Settle;
  check: Check;
}): Promise<void> {
  const { writers, server, scheduler, backup, violations } = run;
  if (backup.log.length === server.version) return;
  // What the backup must not cost: each file a writer holds as the remote held it then (a stale
  // file a one-way writer keeps was replaced knowingly before, as the first check found).
  const held = writers.map((writer) => ({
    writer,
    files: new Map([...writer.tree.contents()].filter(([path, sha]) => server.files.get(path)?.sha256 === sha)),
  }));
  const lost = server.version;
  server.restore(backup);
  scheduler.log(() => `the server is restored from its backup: v${lost} → v${server.version}`);
  for (const writer of writers) {
    writer.crash(); // a new process, from what the state file saved
    const before = [...writer.tree.contents()];
    let refused = false;
    try {
      await scheduler.until(writer.lineage(false));
    } catch (error) {
      if (!(error instanceof RewoundError)) throw error;
      refused = true;
    }
    if (writer.savedVersion > server.version && !refused)
      violations.push(`${writer.name} last synced v${writer.savedVersion} and did not refuse the server restored to v${server.version}`);
    if (JSON.stringify([...writer.tree.contents()]) !== JSON.stringify(before))
      violations.push(`${writer.name} changed its tree while refusing the rewound server`);
    if (refused) await scheduler.until(writer.ontoRewound());
  }
  if (violations.length === 0) await run.settle(writers, scheduler, server, violations);
  if (violations.length === 0) await run.check({ writers, held, server, acknowledged: [], violations });
}
