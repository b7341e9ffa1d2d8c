/**
 * gitignore lines as git reads them (dir.c, wildmatch.c), pure: no file system. A line becomes a
 * rule with a compiled regular expression; `matchRule` answers for one path relative to the
 * directory of the file the rule came from.
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
  readonly regex: RegExp;
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
  return { pattern, source, line, negative, dirOnly, basename, regex: new RegExp(`^${wildmatchToRegex(body)}$`, "s") };
}

/** Does `rule` match the entry at `local` (relative to the rule file's directory), named `name`? */
export function matchRule(rule: IgnoreRule, local: string, name: string, isDir: boolean): boolean {
  if (rule.dirOnly && !isDir) return false;
  return rule.regex.test(rule.basename ? name : local);
}

/** The last rule of the list that matches, as git decides within one file. */
export function lastMatch(rules: readonly IgnoreRule[], local: string, name: string, isDir: boolean): IgnoreRule | undefined {
  for (let i = rules.length - 1; i >= 0; i--) if (matchRule(rules[i]!, local, name, isDir)) return rules[i];
  return undefined;
}

/** `file:line (pattern)`, e.g. `.gitignore:3 (/.env)`. */
export function describeRule(rule: IgnoreRule): string {
  return rule.source === "--ignore" || rule.source === "built-in" ? `${rule.source} (${rule.pattern})` : `${rule.source}:${rule.line} (${rule.pattern})`;
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

/** wildmatch with WM_PATHNAME: `*`, `?` and brackets never match `/`; `**` between slashes does. */
export function wildmatchToRegex(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === "\\") {
      // A trailing lone backslash matches nothing in git.
      if (i + 1 >= pattern.length) return "(?!)";
      out += escapeRegex(pattern[i + 1]!);
      i += 2;
    } else if (c === "?") {
      out += "[^/]";
      i++;
    } else if (c === "[") {
      const bracket = parseBracket(pattern, i);
      if (!bracket) return "(?!)"; // an unclosed bracket matches nothing in git
      out += bracket.regex;
      i = bracket.end;
    } else if (c === "*") {
      let j = i;
      while (pattern[j] === "*") j++;
      const atStart = i === 0 || pattern[i - 1] === "/";
      const atEnd = j === pattern.length || pattern[j] === "/";
      if (j - i >= 2 && atStart && atEnd) {
        if (j === pattern.length) out += ".*";
        else {
          out += "(?:.*/)?";
          j++; // the slash is part of `**/`
        }
      } else {
        out += "[^/]*";
      }
      i = j;
    } else {
      out += escapeRegex(c);
      i++;
    }
  }
  return out;
}

const CLASSES: Record<string, string> = {
  alnum: "a-zA-Z0-9",
  alpha: "a-zA-Z",
  blank: " \\t",
  cntrl: "\\x00-\\x1f\\x7f",
  digit: "0-9",
  graph: "\\x21-\\x7e",
  lower: "a-z",
  print: "\\x20-\\x7e",
  punct: "!-\\/:-@\\[-`{-~",
  space: " \\t\\n\\r\\f\\v",
  upper: "A-Z",
  xdigit: "0-9a-fA-F",
};

/** A `[...]` starting at `start`: its regex and the index after it; undefined when unclosed. */
function parseBracket(pattern: string, start: number): { regex: string; end: number } | undefined {
  let i = start + 1;
  let negate = false;
  if (pattern[i] === "!" || pattern[i] === "^") {
    negate = true;
    i++;
  }
  let body = "";
  let first = true;
  for (; i < pattern.length; i++) {
    const c = pattern[i]!;
    // WM_PATHNAME: not even a range or a negation matches a slash.
    if (c === "]" && !first) return { regex: `(?!/)[${negate ? "^" : ""}${body}]`, end: i + 1 };
    first = false;
    if (c === "\\") {
      i++;
      if (i >= pattern.length) return undefined;
      body += escapeClassChar(pattern[i]!);
    } else if (c === "[" && pattern[i + 1] === ":") {
      const close = pattern.indexOf(":]", i + 2);
      if (close < 0) {
        body += "\\[";
        continue;
      }
      const cls = CLASSES[pattern.slice(i + 2, close)];
      if (cls === undefined) return undefined; // git: a malformed class makes the pattern match nothing
      body += cls;
      i = close + 1;
    } else if (c === "-" && body !== "" && pattern[i + 1] !== "]" && i + 1 < pattern.length) {
      body += "-";
    } else {
      body += escapeClassChar(c);
    }
  }
  return undefined;
}

function escapeClassChar(c: string): string {
  return /[\\\]\[^-]/.test(c) ? `\\${c}` : c;
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}
