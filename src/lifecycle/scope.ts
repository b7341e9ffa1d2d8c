import path from "node:path";
import { createPathPolicy, isInside, type PathPolicy } from "../paths/paths.js";
import type { Reporter } from "../report/reporter.js";

/** The project paths a command was given (files or directories, here or only remotely). */
export interface PathScope {
  given: string[];
  /** The path itself, or anything under it. */
  contains(path: string): boolean;
}

/**
 * The paths on a command line (relative to `cwd`, as in git) as project paths; undefined for none
 * (or the root itself: everything); "usage" after a refusal was said (outside the root, ignored).
 */
export function resolvePaths(options: {
  paths: readonly string[];
  root: string;
  prefix?: string;
  ignore?: string[];
  cwd?: string;
  report: Reporter;
}): PathScope | "usage" | undefined {
  if (options.paths.length === 0) return undefined;
  const policy = createPathPolicy({ root: options.root, ignore: options.ignore, prefix: options.prefix });
  const cwd = options.cwd ?? process.cwd();
  const tops = new Set([path.join(policy.root, options.prefix ?? ""), path.resolve(options.root, options.prefix ?? "")]);
  const given: string[] = [];
  for (const arg of options.paths) {
    if (tops.has(path.resolve(cwd, arg))) return undefined;
    const decision = policy.resolve(arg, cwd);
    if (!decision.ok) {
      options.report.error("usage", decision.reason + fromRootHint(arg, cwd, options.root, policy), { path: arg });
      return "usage";
    }
    given.push(decision.remote);
  }
  return { given, contains: (p) => given.some((g) => p === g || p.startsWith(g + "/")) };
}

/**
 * When the current directory is outside the root (a command run with --root from elsewhere), the
 * path that names what `arg` names from the root: the user may have meant that.
 */
function fromRootHint(arg: string, cwd: string, root: string, policy: PathPolicy): string {
  if (path.isAbsolute(arg) || isInside(root, cwd) || isInside(policy.root, cwd)) return "";
  const meant = path.relative(cwd, path.resolve(root, arg));
  return policy.resolve(meant, cwd).ok ? ` (a path is taken from the current directory, ${cwd}: ${meant} names ${arg} of the root)` : "";
}
