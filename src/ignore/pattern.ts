import { wildmatch } from "./wildmatch.js";

/**
 * gitignore lines as git reads them (dir.c, wildmatch.c), pure: no file system. A line becomes a
 * rule; `lastMatch` answers for one path relative to the directory of the file the rule came from,
 * with git's own matcher (wildmatch.ts), never a regular expression that could backtrack. git matches bytes: `?` and a bracket take one byte of
 * the UTF-8 name (`?` does not match `ä`, `??` does), ranges are byte ranges. So patterns and
 * names are matched as byte strings, one character per byte (`bytesOf`).
 */

export interface IgnoreRule {
  /** The line as written, trailing spaces trimmed: what a notice quotes. */
  readonly pattern: string;
  /** Where it came from: a path relative to the project root, `--ignore` or `built-in`. */
  readonly source: string;
  /** 1-based line number in `source` (the position in the list for `--ignore`). */
  readonly line: number;
  /** `!pattern`: re-includes what an earlier rule excluded. */
  readonly negative: boolean;
  /** `pattern/`: matches directories only. */
  readonly dirOnly: boolean;
  /** No slash in the pattern (but a trailing one): matched against the entry's name at any depth. */
  readonly basename: boolean;
  /**
   * The pattern's bytes (`bytesOf`) without `!`, a leading or a trailing slash, in two parts as
   * dir.c matches them: a literal start it compares itself (all of a line without `*?[\\`; none
   * of a basename line with one), then what wildmatch matches against the rest of the name.
   */
  readonly literalStart: string;
  readonly wild: string | undefined;
  /** A basename line `*<literal>` (git's PATTERN_FLAG_ENDSWITH): the literal a name must end with. */
  readonly suffix: string | undefined;
}

/** The rules of one gitignore-style text, in file order. */
export function parseRules(text: string, source: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const rule = parseLine(lines[i]!, source, i + 1);
    if (rule) rules.push(rule);
  }
  return rules;
}

export function parseLine(raw: string, source: string, line: number): IgnoreRule | undefined {
  if (raw === "" || raw.startsWith("#")) return undefined;
  const pattern = trimTrailingSpaces(raw);
  let body = pattern;
  const negative = body.startsWith("!");
  if (negative) body = body.slice(1);
  const dirOnly = body.endsWith("/");
  if (dirOnly) body = body.slice(0, -1);
  if (body === "") return undefined;
  const basename = !body.includes("/");
  if (body.startsWith("/")) body = body.slice(1);
  const bytes = bytesOf(body);
  const special = bytes.search(/[*?[\\]/);
  // A `**` right after a literal start counts as at a segment's start then: `ZZ**/c` matches `ZZc`.
  const literal = special < 0 ? bytes.length : basename ? 0 : special;
  const wild = special < 0 ? undefined : bytes.slice(literal);
  const suffix = basename && bytes.startsWith("*") && !/[*?[\\]/.test(bytes.slice(1)) ? bytes.slice(1) : undefined;
  return { pattern, source, line, negative, dirOnly, basename, literalStart: bytes.slice(0, literal), wild, suffix };
}

/** The last rule of the list that matches, as git decides within one file. */
export function lastMatch(rules: readonly IgnoreRule[], local: string, name: string, isDir: boolean): IgnoreRule | undefined {
  const [localBytes, nameBytes] = [bytesOf(local), bytesOf(name)];
  for (let i = rules.length - 1; i >= 0; i--) if (matchBytes(rules[i]!, localBytes, nameBytes, isDir)) return rules[i];
  return undefined;
}

function matchBytes(rule: IgnoreRule, local: string, name: string, isDir: boolean): boolean {
  if (rule.dirOnly && !isDir) return false;
  const { literalStart, wild } = rule;
  const text = rule.basename ? name : local;
  if (wild === undefined) return text === literalStart;
  if (rule.suffix !== undefined) return text.endsWith(rule.suffix);
  if (!text.startsWith(literalStart)) return false;
  return wildmatch(wild, literalStart === "" ? text : text.slice(literalStart.length));
}

/** The UTF-8 bytes of `text`, one character (U+0000-U+00FF) per byte; ASCII text is its own. */
export function bytesOf(text: string): string {
  return /[^\x00-\x7f]/.test(text) ? Buffer.from(text, "utf8").toString("latin1") : text;
}

/** `file:line (pattern)`, e.g. `.gitignore:3 (/.env)`. */
export function describeRule(rule: IgnoreRule): string {
  return rule.source === "--ignore" || rule.source === "built-in"
    ? `${rule.source} (${rule.pattern})`
    : `${rule.source}:${rule.line} (${rule.pattern})`;
}

/** Git trims trailing spaces (not tabs) unless the last one is escaped with a backslash. */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === " ") {
    let backslashes = 0;
    for (let i = end - 2; i >= 0 && line[i] === "\\"; i--) backslashes++;
    if (backslashes % 2 === 1) break;
    end--;
  }
  return line.slice(0, end);
}
