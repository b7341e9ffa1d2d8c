import { isMassDelete, MASS_DELETE_TEXT } from "./mass-delete.js";
import type { Reporter } from "../report/reporter.js";
import type { BaseKeeper } from "./base-keeper.js";
import type { LocalStat, LocalTree, Unrepresentable } from "./local-tree.js";
import type { Observation } from "./observe.js";
import type { RemoteView } from "./remote-view.js";

/**
 * A scan: the paths whose local side moved away from the base (and, two-way, whose remote side
 * did), found by a stat of every file and a hash only where the stat moved. Events only make a
 * path sync sooner; the scan is the truth. It decides nothing itself: the paths go to the same
 * queue as every event, and the round decides. It only holds back deletes that are most of the
 * project (a volume not mounted, a wrong --root), on either side, until --force says otherwise.
 */

export interface ScanDeps {
  tree: LocalTree;
  base: BaseKeeper;
  view: RemoteView;
  report: Reporter;
  observe(paths: readonly string[], signal: AbortSignal, listed: ReadonlyMap<string, LocalStat>): Promise<Map<string, Observation>>;
  /** Files read so far (before and after tell how many this scan read). */
  reads(): number;
}

export interface ScanFindings {
  /** Paths to decide. */
  paths: string[];
  /** Files the API cannot name. */
  unrepresentable: Unrepresentable[];
  /** Files in the tree. */
  files: number;
  /** Files read to hash them (a quiet tree: none). */
  hashed: number;
}

export async function scanTree(deps: ScanDeps, twoWay: boolean, signal: AbortSignal): Promise<ScanFindings> {
  const { tree, base, view } = deps;
  const listing = await tree.list(signal);
  const copies = base.conflictCopies();
  const inScope = (p: string) => !copies.has(p) && tree.outOfScope(p) === undefined && !view.refused.has(p);
  const candidates = new Set([...listing.files.keys(), ...base.base.files.keys()]);
  if (twoWay) {
    await view.refresh(signal);
    for (const path of view.files.keys()) candidates.add(path);
  }
  const paths = [...candidates].filter(inScope);
  const readsBefore = deps.reads();
  const observed = await deps.observe(paths, signal, listing.files);
  const found: string[] = [];
  const sides = { localGone: [] as string[], localNew: 0, remoteGone: [] as string[], remoteNew: 0 };
  for (const path of paths) {
    const seen = observed.get(path)!;
    const b = base.sha(path);
    const l = seen.kind === "file" ? seen.file.sha256 : seen.kind === "absent" ? null : undefined;
    const r = twoWay ? (view.get(path)?.sha256 ?? null) : b;
    if (l === b && r === b) continue;
    found.push(path);
    if (l === null && b !== null) sides.localGone.push(path);
    if (l !== null && l !== undefined && b === null) sides.localNew++;
    if (twoWay && r === null && b !== null && l === b) sides.remoteGone.push(path);
    if (twoWay && r !== null && b === null) sides.remoteNew++;
  }
  holdMassDeletes(deps, sides.localGone, sides.localNew, "missing here", "uspark push --force");
  holdMassDeletes(deps, sides.remoteGone, sides.remoteNew, "gone from the remote", "uspark pull --force");
  return { paths: found, unrepresentable: listing.unrepresentable, files: listing.files.size, hashed: deps.reads() - readsBefore };
}

/** Deletes of most of what the base holds, net of new files (a rename is no loss), stay undone until forced. */
function holdMassDeletes(deps: ScanDeps, gone: string[], added: number, where: string, force: string): void {
  const baseFiles = deps.base.base.files.size;
  if (!isMassDelete(gone.length - added, baseFiles)) return;
  deps.base.hold(gone);
  deps.report.warnOnce(
    `mass-delete:${where}`,
    "mass-delete",
    `${gone.length} of the ${baseFiles} files last synced are ${where}: not deleting them on the other side ` +
      `(more than ${MASS_DELETE_TEXT}: a wrong --root, --prefix or project, a volume not mounted?). If they are meant to go: ${force}`,
    { deletes: gone.length, base: baseFiles },
  );
}
