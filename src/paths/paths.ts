import { realpathSync } from "node:fs";
import path from "node:path";
import { IgnoreEngine } from "../ignore/engine.js";
import { describeRule } from "../ignore/pattern.js";
import { validateProjectPath } from "../api/validate.js";

/**
 * The path policy: which local files may be synced, and under which project path. Nothing
 * outside the root leaves the machine, whatever the agent wrote: `..`, symlinks and sibling
 * directories with the same prefix are resolved before the check, not after.
 */
export interface PathPolicyOptions {
  /** The project root; the only tree files may come from. */
  root: string;
  /** More gitignore-style patterns to leave out, relative to the root. */
  ignore?: readonly string[];
  /** Sync only files under this project-relative directory, and strip it remotely. */
  prefix?: string;
  /** The one ignore engine of the session, shared with the file watcher; made from `ignore` when absent. */
  ignoreEngine?: IgnoreEngine;
}

export type PathDecision =
  | {
      ok: true;
      /** the real local path */ abs: string;
      /** relative to the root */ rel: string;
      /** path in the remote project */ remote: string;
    }
  | {
      ok: false;
      /** one line that names the cause */
      reason: string;
      /** "skip": the user's own rule, not worth a warning; "notice": the same, said once per path (an ignored file a tool wrote) */
      severity: "warn" | "skip" | "notice";
    };

/** Never synced, wherever they are in the tree. */
export const BUILTIN_IGNORES = [".git/", "node_modules/", ".uspark/"] as const;

/**
 * The rule that now leaves a path out (ignored, --ignore, outside --prefix), or undefined. Asked
 * again when a batch is read; a hostile path (a symlink swapped in) is the read's own check,
 * which counts it as not synced.
 */
export function ignoredNow(decision: PathDecision): string | undefined {
  return decision.ok || decision.severity === "warn" ? undefined : decision.reason;
}

export interface PathPolicy {
  readonly root: string;
  /** The ignore engine every source asks. */
  readonly ignore: IgnoreEngine;
  resolve(agentPath: string, cwd?: string): PathDecision;
}

export function createPathPolicy(options: PathPolicyOptions): PathPolicy {
  const root = path.resolve(options.root);
  const realRoot = realpathSync.native(root);
  const engine = options.ignoreEngine ?? new IgnoreEngine({ root: realRoot, ignore: options.ignore });
  const prefix = options.prefix ? normalizePrefix(options.prefix) : undefined;
  /** Ignored paths already told about: one notice each. */
  const noticed = new Set<string>();

  return {
    root: realRoot,
    ignore: engine,
    resolve(agentPath, cwd) {
      if (agentPath.includes("\0")) return refuse(`refused ${JSON.stringify(agentPath)}: the path contains a NUL byte`);
      const abs = path.resolve(cwd ?? realRoot, agentPath);
      if (!isInside(root, abs) && !isInside(realRoot, abs)) return refuse(`refused ${agentPath}: outside the project root ${realRoot}`);
      const real = realpathOfPossiblyMissing(abs);
      if (!isInside(realRoot, real))
        return refuse(`refused ${agentPath}: it resolves through a symlink to ${real}, outside the project root`);
      return classify(path.relative(realRoot, real).split(path.sep).join("/"), real, agentPath);
    },
  };

  function classify(rel: string, real: string, agentPath: string): PathDecision {
    if (rel === "") return refuse(`refused ${agentPath}: it is the project root, not a file`);
    const rule = engine.check(rel, false, { fresh: true });
    if (rule?.source === "built-in") return refuse(`not synced ${rel}: ${BUILTIN_IGNORES.join(", ")} are never synced`);
    if (rule) {
      const severity = rule.source === "--ignore" || noticed.has(rel) ? "skip" : "notice";
      noticed.add(rel);
      return { ok: false, severity, reason: `not synced ${rel}: ignored by ${describeRule(rule)}` };
    }
    let remote = rel;
    if (prefix !== undefined) {
      if (!rel.startsWith(prefix + "/")) return { ok: false, severity: "skip", reason: `not synced ${rel}: outside --prefix ${prefix}` };
      remote = rel.slice(prefix.length + 1);
    }
    const invalid = validateProjectPath(remote);
    if (invalid) return refuse(`refused ${rel}: ${invalid}`);
    return { ok: true, abs: real, rel, remote };
  }
}

function refuse(reason: string): PathDecision {
  return { ok: false, severity: "warn", reason };
}

/** `/a/bc` is not inside `/a/b`: compare whole segments, never string prefixes. */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(".." + path.sep) && !path.isAbsolute(rel));
}

/** `dir` (resolved) and each directory above it, up to the file system's root. */
export function* selfAndAncestors(dir: string): Generator<string> {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    yield at;
    if (path.dirname(at) === at) return;
  }
}

/** The real path of a file that may not exist (a delete): resolve its deepest existing ancestor. */
export function realpathOfPossiblyMissing(abs: string): string {
  let existing = abs;
  const missing: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync.native(existing), ...missing.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return abs;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

function normalizePrefix(prefix: string): string {
  return prefix
    .split(/[\\/]+/)
    .filter((segment) => segment !== "" && segment !== ".")
    .join("/");
}
