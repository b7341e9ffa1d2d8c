import path from "node:path";
import type { FileChange } from "../agents/types.js";
import type { PathDecision, PathPolicy } from "../paths/paths.js";
import type { Reporter } from "../report/reporter.js";

export interface IntakeOptions {
  policy: PathPolicy;
  report: Reporter;
  /** Where a relative path of a stream that names no working directory is resolved. */
  agentCwd: string;
  dryRun: boolean;
  /** An accepted change, to sync (not in a dry run). */
  accept: (remote: string, cause: FileChange["cause"]) => void;
}

/**
 * Every change the agent's events and the file watcher report passes here: the path policy
 * decides it (refused, skipped, or a remote path to sync), and the counts of the summary are kept.
 */
export class ChangeIntake {
  /** Changes accepted by the path policy. */
  detected = 0;
  /** Refused paths, as written (two spellings of one file are two agent mistakes). */
  readonly refused = new Set<string>();
  /** What a dry run would push or delete. */
  readonly dryRunPaths = new Set<string>();
  /**
   * Accepted paths are remembered: resolving symlinks costs more than all the parsing of a
   * session, and a path that turns bad later is still refused by the sync's read, which checks
   * the real path of the descriptor it opened. Rules that changed (a .gitignore, whoever noticed
   * it) make every remembered decision stale: they are all forgotten.
   */
  private readonly accepted = new Map<string, PathDecision>();

  constructor(private readonly options: IntakeOptions) {
    options.policy.ignore.onRulesChanged(() => this.accepted.clear());
  }

  /** Decides one change (bound: it is handed to parsers and the file watcher as is). */
  readonly take = (change: FileChange): void => {
    const { report, dryRun } = this.options;
    const decision = this.decide(change);
    if (!decision.ok) return this.refuse(change, decision);
    this.detected++;
    const fields = { path: decision.remote, cause: change.cause, kind: change.kind, confirmed: change.confirmed };
    if (dryRun) {
      this.dryRunPaths.add(decision.remote);
      const note = change.confirmed ? "" : ", unconfirmed: checked by hash";
      const line = `would ${change.kind === "delete" ? "delete" : "push"} ${decision.remote} (${change.cause}${note})`;
      report.infoOnce(line, "change", line, fields);
      return;
    }
    report.debug("change", `detected ${decision.remote} (${change.cause})`, fields);
    this.options.accept(decision.remote, change.cause);
  };

  private decide(change: FileChange): PathDecision {
    // An absolute path is decided whatever the working directory: the tool's event (which names
    // one) and the file watcher's (which does not) share one decision.
    const key = path.isAbsolute(change.path) ? change.path : `${change.cwd ?? ""}\0${change.path}`;
    const known = this.accepted.get(key);
    if (known) return known;
    const decision = this.options.policy.resolve(change.path, change.cwd ?? this.options.agentCwd);
    if (decision.ok) this.accepted.set(key, decision);
    return decision;
  }

  private refuse(change: FileChange, decision: Extract<PathDecision, { ok: false }>): void {
    const { report, agentCwd } = this.options;
    const fields = { path: change.path, cause: change.cause };
    if (decision.severity === "skip") return report.debug("skipped", decision.reason, fields);
    if (decision.severity === "notice") return report.info("skipped", decision.reason, fields);
    const key = path.isAbsolute(change.path) ? change.path : `${change.cwd ?? agentCwd}/${change.path}`;
    this.refused.add(key);
    report.warnOnce(key, "refused", decision.reason, fields);
  }
}
