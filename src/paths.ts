import { realpathSync } from "node:fs";
import path from "node:path";
import type Ignore from "ignore";
import { requireCjs } from "./cjs.js";
import { validateProjectPath } from "./server/validate.js";

const ignore = requireCjs("ignore") as typeof Ignore;

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
}

export type PathDecision =
  | { ok: true; /** the real local path */ abs: string; /** relative to the root */ rel: string; /** path in the remote project */ remote: string }
  | { ok: false; /** one line that names the cause */ reason: string; /** "skip" is the user's own rule, not worth a warning */ severity: "warn" | "skip" };

/** Never synced, wherever they are in the tree. */
export const BUILTIN_IGNORES = [".git/", "node_modules/", ".uspark/"] as const;

export interface PathPolicy {
  readonly root: string;
  resolve(agentPath: string, cwd?: string): PathDecision;
}

export function createPathPolicy(options: PathPolicyOptions): PathPolicy {
  const root = path.resolve(options.root);
  const realRoot = realpathSync.native(root);
  const builtin = ignore().add([...BUILTIN_IGNORES]);
  const user = ignore().add([...(options.ignore ?? [])]);
  const prefix = options.prefix ? normalizePrefix(options.prefix) : undefined;

  return {
    root: realRoot,
    resolve(agentPath, cwd) {
      if (agentPath.includes("\0")) return refuse(`refused ${JSON.stringify(agentPath)}: the path contains a NUL byte`);
      const abs = path.resolve(cwd ?? realRoot, agentPath);
      if (!isInside(root, abs) && !isInside(realRoot, abs)) return refuse(`refused ${agentPath}: outside the project root ${realRoot}`);
      const real = realpathOfPossiblyMissing(abs);
      if (!isInside(realRoot, real)) return refuse(`refused ${agentPath}: it resolves through a symlink to ${real}, outside the project root`);
      return classify(path.relative(realRoot, real).split(path.sep).join("/"), real, agentPath);
    },
  };

  function classify(rel: string, real: string, agentPath: string): PathDecision {
    if (rel === "") return refuse(`refused ${agentPath}: it is the project root, not a file`);
    if (builtin.ignores(rel)) return refuse(`not synced ${rel}: ${BUILTIN_IGNORES.join(", ")} are never synced`);
    if (user.ignores(rel)) return { ok: false, severity: "skip", reason: `not synced ${rel}: matches --ignore` };
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
  return prefix.split(/[\\/]+/).filter((segment) => segment !== "" && segment !== ".").join("/");
}
