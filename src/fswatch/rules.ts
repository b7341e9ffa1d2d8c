import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import type IgnoreFactory from "ignore";
import type { Ignore } from "ignore";
import { requireCjs } from "../cjs.js";
import { BUILTIN_IGNORES } from "../paths.js";

const ignore = requireCjs("ignore") as typeof IgnoreFactory;

/**
 * Which entries the file system watcher leaves alone: the built-in names (`.git`, `node_modules`,
 * `.uspark`, at any depth), the user's `--ignore` globs, and git's own rules: `.git/info/exclude`,
 * the `.gitignore` files of the directories above the root inside the same repository, the root's
 * `.gitignore` and every nested one, a deeper file overriding a shallower one as in git.
 *
 * Rules are asked about one entry of one directory at a time while the tree is walked, as git
 * does: an ignored directory is never entered, so only the entry's own path is matched, never its
 * parents'. That is also what makes it fast: a rule without a slash (most of a .gitignore) depends
 * on the entry's name alone, and its answer is remembered per name.
 */

/** The names in BUILTIN_IGNORES ("node_modules/" → "node_modules"). */
const BUILTIN_NAMES: ReadonlySet<string> = new Set(BUILTIN_IGNORES.map((entry) => entry.replace(/\/+$/, "")));

interface Match {
  ignored: boolean;
  unignored: boolean;
}

const NO_MATCH: Match = { ignored: false, unignored: false };
/** Names remembered per rule file before the memory is cleared (a bound, not a tuning knob). */
const MAX_REMEMBERED_NAMES = 200_000;

/** The patterns of one gitignore-style file (or the `--ignore` globs). */
export class RuleSet {
  /** Rules without a slash but a trailing one: they match the entry's name. */
  private readonly names: Ignore | undefined;
  /** Rules with a slash: they match the path relative to the file's directory. */
  private readonly paths: Ignore | undefined;
  /**
   * A rule with a slash is anchored to its file's directory: `build/Release` can only match a path
   * that starts with `build`. The first segments of all of them, or undefined when one starts
   * with a wildcard (such as a leading `**`) and any path may match.
   */
  private readonly firstSegments: ReadonlySet<string> | undefined;
  /** All of them in order: when one of each kind matches, the last one decides. */
  private readonly all: Ignore;
  private readonly byName = new Map<string, Match>();

  constructor(lines: readonly string[]) {
    const names: string[] = [];
    const paths: string[] = [];
    for (const line of lines) (hasInnerSlash(line) ? paths : names).push(line);
    this.names = names.length > 0 ? ignore().add(names) : undefined;
    this.paths = paths.length > 0 ? ignore().add(paths) : undefined;
    const firsts = paths.map(literalFirstSegment);
    this.firstSegments = firsts.every((first) => first !== undefined) ? new Set(firsts as string[]) : undefined;
    this.all = ignore().add([...lines]);
  }

  /** `local`: the entry's path relative to the file's directory; `name`: its last segment. */
  test(local: string, name: string, isDir: boolean): Match {
    const key = isDir ? `${name}/` : name;
    let byName = this.byName.get(key);
    if (byName === undefined) {
      byName = this.names ? selfTest(this.names, key) : NO_MATCH;
      if (this.byName.size >= MAX_REMEMBERED_NAMES) this.byName.clear();
      this.byName.set(key, byName);
    }
    if (!this.paths || (this.firstSegments && !this.firstSegments.has(firstSegment(local)))) return byName;
    const probe = isDir ? `${local}/` : local;
    const byPath = selfTest(this.paths, probe);
    if (!byPath.ignored && !byPath.unignored) return byName;
    if (!byName.ignored && !byName.unignored) return byPath;
    return selfTest(this.all, probe);
  }
}

/** One rule file and how to turn a root-relative path into a path relative to its directory. */
export interface RuleFile {
  readonly rules: RuleSet;
  /** Prepended to the root-relative path (for files above the root: the root's path below them). */
  readonly prefix: string;
  /** Characters cut from the start of the root-relative path (for files below the root). */
  readonly strip: number;
}

/** The rule files that apply inside one directory, lowest precedence first. */
export type RuleChain = readonly RuleFile[];

export class IgnoreRules {
  private readonly user: RuleSet | undefined;

  constructor(userGlobs: readonly string[] = []) {
    const globs = userGlobs.filter((glob) => glob.trim() !== "");
    this.user = globs.length > 0 ? new RuleSet(globs) : undefined;
  }

  /**
   * Is `name`, an entry of the directory at `dirRel` ("" for the root) whose rules are `chain`,
   * ignored? `isDir` matters for patterns with a trailing slash (`dist/`).
   */
  ignored(chain: RuleChain, dirRel: string, name: string, isDir: boolean): boolean {
    // A `.git` file (a worktree's or submodule's pointer) is git's business too.
    if (BUILTIN_NAMES.has(name) && (isDir || name === ".git")) return true;
    if (chain.length === 0 && !this.user) return false;
    const rel = dirRel === "" ? name : `${dirRel}/${name}`;
    if (this.user?.test(rel, name, isDir).ignored) return true;
    let ignored = false;
    for (const file of chain) {
      const result = file.rules.test(file.prefix + rel.slice(file.strip), name, isDir);
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }
}

/** The chain for a directory: its parent's chain plus its own `.gitignore`, if it has one. */
export function extendChain(parent: RuleChain, dirRel: string, own: RuleSet | undefined): RuleChain {
  if (!own) return parent;
  return [...parent, { rules: own, prefix: "", strip: dirRel === "" ? 0 : dirRel.length + 1 }];
}

/** Parses a `.gitignore` text; undefined when it has no rule. */
export function parseIgnoreFile(text: string | undefined): RuleSet | undefined {
  if (text === undefined) return undefined;
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "" && !line.startsWith("#"));
  return lines.length > 0 ? new RuleSet(lines) : undefined;
}

/**
 * The rules that come from outside the watched tree: when the root lies inside a git work tree,
 * that repository's `.git/info/exclude` and the `.gitignore` files from the repository's top down
 * to the root's parent, with paths rewritten as git sees them. Reads a handful of small files.
 */
export function outerRules(root: string): RuleChain {
  const above: string[] = [];
  let top: string | undefined;
  for (let dir = root; ; ) {
    if (exists(path.join(dir, ".git"))) {
      top = dir;
      break;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    above.push(parent);
    dir = parent;
  }
  if (top === undefined) return [];
  const chain: RuleFile[] = [];
  const prefixFor = (dir: string) => {
    const rel = path.relative(dir, root).split(path.sep).join("/");
    return rel === "" ? "" : `${rel}/`;
  };
  const exclude = parseIgnoreFile(readText(path.join(top, ".git", "info", "exclude")));
  if (exclude) chain.push({ rules: exclude, prefix: prefixFor(top), strip: 0 });
  // The directories strictly above the root, from the repository's top down.
  for (const dir of above.reverse()) {
    const rules = parseIgnoreFile(readText(path.join(dir, ".gitignore")));
    if (rules) chain.push({ rules, prefix: prefixFor(dir), strip: 0 });
  }
  return chain;
}

/** Does the pattern on this line contain a slash other than a trailing one (git's EXC_FLAG_NODIR)? */
function hasInnerSlash(line: string): boolean {
  let body = line.trimEnd();
  if (body.startsWith("!")) body = body.slice(1);
  if (body.endsWith("/")) body = body.slice(0, -1);
  return body.includes("/");
}

/** The first segment of a rule with a slash when it is plain text (no wildcard, no escape). */
function literalFirstSegment(line: string): string | undefined {
  let body = line.trimEnd();
  if (body.startsWith("!")) body = body.slice(1);
  if (body.startsWith("/")) body = body.slice(1);
  const first = body.slice(0, body.indexOf("/"));
  return first === "" || /[*?[\\]/.test(first) ? undefined : first;
}

function firstSegment(local: string): string {
  const slash = local.indexOf("/");
  return slash < 0 ? local : local.slice(0, slash);
}

/**
 * Matches one path against the rules, without looking at its parent directories (the walk never
 * enters an ignored one). `ignore` does exactly that internally; its public `test()` adds the
 * parents, which is the same answer except where a negation re-included a directory. The
 * internal is used only if it answers a known question right, else the public API is.
 */
const selfTest: (ig: Ignore, pathname: string) => Match = (() => {
  type Internal = { _rules?: { test?: (pathname: string, mode: string) => Match } };
  const viaPublicApi = (ig: Ignore, pathname: string): Match => {
    try {
      return ig.test(pathname);
    } catch {
      return NO_MATCH; // `ignore` throws on a path it finds invalid: such a path is not ignored
    }
  };
  const internal = (ig: Ignore, pathname: string): Match => {
    try {
      return (ig as unknown as Internal)._rules!.test!(pathname, "regex");
    } catch {
      return viaPublicApi(ig, pathname);
    }
  };
  try {
    const probe = ignore().add(["dir/", "!keep/"]);
    const works =
      internal(probe, "dir/").ignored && !internal(probe, "dir/file").ignored && internal(probe, "a/keep/").unignored && !internal(probe, "dir").ignored;
    return works ? internal : viaPublicApi;
  } catch {
    return viaPublicApi;
  }
})();

function exists(candidate: string): boolean {
  try {
    statSync(candidate);
    return true;
  } catch {
    return false;
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
