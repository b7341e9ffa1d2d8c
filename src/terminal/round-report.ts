import { MASS_DELETE_TEXT } from "../reconcile/mass-delete.js";
import type { Ledger } from "../reconcile/ledger.js";
import type { Plan } from "../reconcile/plan.js";
import type { RoundResult } from "../reconcile/reconciler.js";
import { reportNotSynced, type Reporter } from "../report/reporter.js";

/**
 * What a push or a pull says about its round: the plan of a dry run line by line, the deletes the
 * guard held, the refused remote paths, what was not synced, and the one summary line. The exit
 * code follows from the same facts (`troubles`).
 */

/** A dry run: every change the round would make, one line each. */
export function reportPlan(report: Reporter, plan: Plan, event: "push-plan" | "pull-plan"): void {
  const line = (op: string, path: string, text: string) => report.info(event, text, { op, path });
  for (const p of plan.puts) line("push", p.path, `would push ${p.path}`);
  for (const d of plan.deletes) line("delete", d.path, `would delete ${d.path} remotely`);
  for (const w of plan.writes) line("pull", w.path, `would pull ${w.path}${w.backup ? " (your version kept in .uspark/backup/)" : ""}`);
  for (const r of plan.removes) line("remove", r.path, `would delete ${r.path} here (the remote deleted it)`);
  for (const c of plan.conflicts)
    line(
      "conflict",
      c.path,
      `conflict ${c.path}: would keep both ${c.copy ? `(yours committed as ${c.copy})` : "as they are (a pull never commits)"}`,
    );
  for (const c of plan.copies)
    if (!plan.conflicts.some((n) => n.copy === c.path))
      line("copy", c.path, `would update the conflict copy ${c.path} with your version of ${c.from}`);
}

/** The deletes the mass-delete guard refused, said once per side. */
export function reportHeld(report: Reporter, plan: Plan, baseFiles: number, side: "push" | "pull"): void {
  const held = side === "push" ? plan.held.remote : plan.held.local;
  if (held.length === 0) return;
  const what =
    side === "push"
      ? `${held.length} of the ${baseFiles} files last synced are missing here`
      : `the remote no longer has ${held.length} of the ${baseFiles} files last synced here`;
  const force = side === "push" ? "uspark push --force" : "uspark pull --force";
  report.error(
    "mass-delete",
    `${what}: not deleting them (more than ${MASS_DELETE_TEXT}, or held since an earlier refusal; a wrong --root, --prefix or project, a volume not mounted?). ` +
      `If they are meant to go: ${force}`,
    { deletes: held.length, base: baseFiles, paths: held },
  );
}

/**
 * Remote paths never written here nor pushed (invalid, reserved, a hostile listing, a file and a
 * directory under one name): one warning each.
 */
export function reportRefusedPaths(report: Reporter, result: RoundResult, side: "push" | "pull" = "pull"): number {
  const refused = result.outOfScope.filter((o) => o.refused);
  const left = side === "pull" ? "not written" : "not pushed; the local file is kept";
  for (const { path, reason } of refused)
    report.warn(`${side}-refused`, `refused ${JSON.stringify(path)}: ${reason}; ${left}`, { path, reason });
  return refused.length;
}

/** Paths not synced (failed, skipped, unrepresentable), one line per reason; returns how many. */
export function reportUnsynced(report: Reporter, ledger: Ledger, result: RoundResult): number {
  const entries: { remote: string; reason: string }[] = [];
  for (const [remote, outcome] of ledger.unsettled()) {
    if (outcome.status === "failed" || outcome.status === "skipped") entries.push({ remote, reason: outcome.reason });
  }
  for (const u of result.unrepresentable) entries.push({ remote: u.remote, reason: u.reason });
  reportNotSynced(report, entries);
  return entries.length;
}

/** Open conflicts among the ledger's paths. */
export function openConflicts(ledger: Ledger): string[] {
  return ledger
    .unsettled()
    .filter(([, o]) => o.status === "conflict")
    .map(([path]) => path);
}
