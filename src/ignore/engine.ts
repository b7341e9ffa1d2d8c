import { statSync } from "node:fs";
import path from "node:path";
import { lastMatch, parseLine, parseRules, type IgnoreRule } from "./pattern.js";
import { findRepository, readText } from "./repository.js";

/**
 * The one ignore decision of uspark, for every source (tool events through the path policy, the
 * file watcher, `push`'s walk, scans): is this root-relative path ignored, and by which rule?
 * Answers as `git check-ignore --no-index` does, in git's order of precedence:
 *
 * 1. the built-in names `.git`, `node_modules`, `.uspark` at any depth, then `--ignore` globs;
 * 2. the `.gitignore` of the entry's directory, then of each directory above it up to the root,
 *    then those above the root inside the same repository: the deepest file that has a matching
 *    line decides, and within a file the last matching line;
 * 3. the repository's `.git/info/exclude`.
 *
 * A directory that is excluded hides everything below it: nothing in it can be re-included.
 * Each directory's `.gitignore` is read once and kept; `reload(dir)` (the watcher, on an event)
 * or `check(rel, isDir, { fresh: true })` (the policy: a stat per directory on the path) notices
 * that it changed mid-session.
 */

export interface IgnoreEngineOptions {
  /** The real path of the project root. */
  root: string;
  /** The user's gitignore-style globs (`--ignore`), relative to the root. */
  ignore?: readonly string[];
}

/** One rule file as read: its rules and what tells it changed. */
interface RuleFile {
  readonly file: string;
  /** For files above the root: the root's path below their directory, with a trailing slash. */
  readonly prefix: string;
  rules: IgnoreRule[];
  stamp: string;
}

/** The `.gitignore` of a directory under the root. */
interface LevelFile extends RuleFile {
  readonly dirRel: string;
}

const BUILTIN_NAMES = [".git", "node_modules", ".uspark"] as const;
const BUILTIN_RULES: ReadonlyMap<string, IgnoreRule> = new Map(
  BUILTIN_NAMES.map((name, i) => [name, parseLine(`${name}/`, "built-in", i + 1)!]),
);
/** A temp file of ours made beside its target (disk-write.ts): `.<name>.uspark-<12 hex>.tmp`. */
const OWN_TEMP_NAME = /^\..*\.uspark-[0-9a-f]{12}\.tmp$/s;

/** Whether a file name is one of our temp files made beside its target: never synced, whatever the rules say. */
export function isOwnTempName(name: string): boolean {
  return OWN_TEMP_NAME.test(name);
}

const OWN_TEMP_RULE = parseLine(".*.uspark-*.tmp", "built-in", BUILTIN_NAMES.length + 1)!;

export class IgnoreEngine {
  readonly root: string;
  private readonly user: IgnoreRule[];
  /** The `.gitignore` of each directory asked about, by its root-relative path ("" for the root). */
  private readonly levels = new Map<string, LevelFile>();
  /**
   * Per directory, the rule files that apply to its entries and have rules, deepest first: built
   * from its parent's, so that a check costs the same at any depth (a deep tree has thousands of
   * levels, nearly all without a .gitignore). Forgotten whenever rules change.
   */
  private readonly scopes = new Map<string, readonly LevelFile[]>();
  /** The `.gitignore` files above the root, deepest first, then `.git/info/exclude`. */
  private readonly outer: RuleFile[] = [];
  private readonly listeners: ((dirRel: string) => void)[] = [];

  constructor(options: IgnoreEngineOptions) {
    this.root = options.root;
    this.user = (options.ignore ?? []).flatMap((glob, i) => parseLine(glob, "--ignore", i + 1) ?? []);
    const repo = findRepository(this.root);
    if (!repo) return;
    const prefixFor = (dir: string) => {
      const rel = toPosix(path.relative(dir, this.root));
      return rel === "" ? "" : `${rel}/`;
    };
    for (const dir of repo.above) this.outer.push(this.load(path.join(dir, ".gitignore"), prefixFor(dir)));
    this.outer.push(this.load(repo.excludeFile, prefixFor(repo.top)));
  }

  /**
   * The rule that excludes `rel` (root-relative, `/`-separated), or undefined when it is not
   * ignored. Its parent directories are checked first: an excluded one decides. `fresh`: re-read
   * the rule files on the way whose stat changed.
   */
  check(rel: string, isDir: boolean, options: { fresh?: boolean } = {}): IgnoreRule | undefined {
    if (options.fresh) this.refresh(rel);
    let dir = "";
    for (let slash = rel.indexOf("/"); slash >= 0; slash = rel.indexOf("/", slash + 1)) {
      const name = rel.slice(dir === "" ? 0 : dir.length + 1, slash);
      const rule = this.checkEntry(dir, name, true);
      if (rule) return rule;
      dir = rel.slice(0, slash);
    }
    return this.checkEntry(dir, rel.slice(dir === "" ? 0 : dir.length + 1), isDir);
  }

  /** The same for an entry of a directory known not to be ignored (a walk never enters one). */
  checkEntry(dirRel: string, name: string, isDir: boolean): IgnoreRule | undefined {
    const builtin = BUILTIN_RULES.get(name);
    if (builtin && (isDir || name === ".git")) return builtin;
    if (!isDir && isOwnTempName(name)) return OWN_TEMP_RULE;
    const rel = dirRel === "" ? name : `${dirRel}/${name}`;
    const user = lastMatch(this.user, rel, name, isDir);
    if (user) return user.negative ? undefined : user;
    for (const level of this.scope(dirRel)) {
      const rule = lastMatch(level.rules, level.dirRel === "" ? rel : rel.slice(level.dirRel.length + 1), name, isDir);
      if (rule) return rule.negative ? undefined : rule;
    }
    for (const file of this.outer) {
      const rule = lastMatch(file.rules, file.prefix + rel, name, isDir);
      if (rule) return rule.negative ? undefined : rule;
    }
    return undefined;
  }

  /**
   * Calls `listener` whenever rules changed, whoever noticed it first (the policy or the watcher),
   * with the directory whose rules changed ("" for the root and the files above it): what it
   * covers must be looked at again.
   */
  onRulesChanged(listener: (dirRel: string) => void): void {
    this.listeners.push(listener);
  }

  /**
   * A walk entering `dirRel` (its parent's rules were looked at a moment ago): re-reads its own
   * `.gitignore` if that changed since it was read. One stat, at any depth.
   */
  refreshDir(dirRel: string): void {
    const known = this.levels.get(dirRel);
    if (known && stampOf(known.file) !== known.stamp) this.reload(dirRel);
  }

  /** Re-reads the `.gitignore` of `dirRel`; true when its rules changed. */
  reload(dirRel: string): boolean {
    const known = this.levels.get(dirRel);
    if (!known) {
      const fresh = this.level(dirRel);
      if (fresh.rules.length > 0) this.changed(dirRel);
      return fresh.rules.length > 0;
    }
    return this.reread(known, dirRel === "" ? ".gitignore" : `${dirRel}/.gitignore`, dirRel);
  }

  /** Re-reads the rule files that apply to `rel` whose stat changed. */
  private refresh(rel: string): void {
    for (const file of this.outer)
      if (stampOf(file.file) !== file.stamp) this.reread(file, toPosix(path.relative(this.root, file.file)), "");
    for (let dir: string | undefined = parentOf(rel); dir !== undefined; dir = parentOf(dir)) {
      const known = this.levels.get(dir);
      if (known && stampOf(known.file) !== known.stamp) this.reload(dir);
    }
  }

  /** The rule files with rules that apply in `dirRel`, deepest first (its parents' are made first, and kept). */
  private scope(dirRel: string): readonly LevelFile[] {
    const known = this.scopes.get(dirRel);
    if (known) return known;
    const missing: string[] = [];
    let dir: string | undefined = dirRel;
    for (; dir !== undefined && !this.scopes.has(dir); dir = parentOf(dir)) missing.push(dir);
    let scope: readonly LevelFile[] = dir === undefined ? [] : this.scopes.get(dir)!;
    for (const level of missing.reverse()) {
      const file = this.level(level);
      // A directory without rules shares its parent's list: no copy per level.
      if (file.rules.length > 0) scope = [file, ...scope];
      this.scopes.set(level, scope);
    }
    return scope;
  }

  private level(dirRel: string): LevelFile {
    let level = this.levels.get(dirRel);
    if (!level) {
      const file = dirRel === "" ? path.join(this.root, ".gitignore") : path.join(this.root, ...dirRel.split("/"), ".gitignore");
      level = { ...this.load(file, "", dirRel === "" ? ".gitignore" : `${dirRel}/.gitignore`), dirRel };
      this.levels.set(dirRel, level);
    }
    return level;
  }

  private load(file: string, prefix: string, source = toPosix(path.relative(this.root, file))): RuleFile {
    const stamp = stampOf(file);
    return { file, prefix, stamp, rules: stamp === MISSING ? [] : parseRules(readText(file), source) };
  }

  private reread(known: RuleFile, source: string, dirRel: string): boolean {
    const fresh = this.load(known.file, known.prefix, source);
    known.stamp = fresh.stamp;
    if (sameRules(known.rules, fresh.rules)) return false;
    known.rules = fresh.rules;
    this.changed(dirRel);
    return true;
  }

  private changed(dirRel: string): void {
    this.scopes.clear();
    for (const listener of this.listeners) listener(dirRel);
  }
}

const MISSING = "missing";

/** What tells a rule file changed: its inode, size and times; MISSING when it is not a file. */
function stampOf(file: string): string {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st?.isFile() ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : MISSING;
  } catch {
    return MISSING;
  }
}

function sameRules(a: readonly IgnoreRule[], b: readonly IgnoreRule[]): boolean {
  return a.length === b.length && a.every((rule, i) => rule.pattern === b[i]!.pattern && rule.line === b[i]!.line);
}

/** "a/b" → "a", "a" → "", "" → undefined. */
function parentOf(rel: string): string | undefined {
  if (rel === "") return undefined;
  const slash = rel.lastIndexOf("/");
  return slash < 0 ? "" : rel.slice(0, slash);
}

function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}
