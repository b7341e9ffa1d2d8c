/**
 * gitignore lines as git reads them (dir.c, wildmatch.c), pure: no file system. A line becomes a
 * rule with a compiled regular expression; `lastMatch` answers for one path relative to the
 * directory of the file the rule came from. git matches bytes: `?` and a bracket take one byte of
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
  const bytes = bytesOf(body);
  // dir.c compares a path pattern's literal start itself and wildmatches the rest from there.
  const literal = basename ? 0 : bytes.search(/[*?[\\]|$/);
  return { pattern, source, line, negative, dirOnly, basename, regex: new RegExp(`^${wildmatchToRegex(bytes, literal)}$`, "s") };
}

/** The last rule of the list that matches, as git decides within one file. */
export function lastMatch(rules: readonly IgnoreRule[], local: string, name: string, isDir: boolean): IgnoreRule | undefined {
  const [localBytes, nameBytes] = [bytesOf(local), bytesOf(name)];
  for (let i = rules.length - 1; i >= 0; i--) if (matchBytes(rules[i]!, localBytes, nameBytes, isDir)) return rules[i];
  return undefined;
}

function matchBytes(rule: IgnoreRule, local: string, name: string, isDir: boolean): boolean {
  if (rule.dirOnly && !isDir) return false;
  return rule.regex.test(rule.basename ? name : local);
}

/** The UTF-8 bytes of `text`, one character (U+0000-U+00FF) per byte; ASCII text is its own. */
export function bytesOf(text: string): string {
  return /[^\x00-\x7f]/.test(text) ? Buffer.from(text, "utf8").toString("latin1") : text;
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

/**
 * wildmatch with WM_PATHNAME: `*`, `?` and brackets never match `/`; `**` between slashes does.
 * `wildmatchFrom`: where git's wildmatch starts (after the literal start dir.c compares itself):
 * a double star there counts as at the start of a segment, as git has it (with a literal `ZZ`
 * before it, a double star then a slash may match no directory: `ZZc` matches; a trailing one
 * matches slashes: `ZZ/a` matches).
 */
export function wildmatchToRegex(pattern: string, wildmatchFrom = 0): string {
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
      const atStart = i === 0 || i === wildmatchFrom || pattern[i - 1] === "/";
      const atEnd = j === pattern.length || pattern[j] === "/";
      if (j - i >= 2 && atStart && pattern.startsWith("\\/", j)) {
        out += ".*"; // before an escaped slash: any text, slashes too (no "zero directories")
      } else if (j - i >= 2 && atStart && atEnd) {
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
  space: " \\t\\n\\r", // git's own ctype.c: vertical tab and form feed are not space
  upper: "A-Z",
  xdigit: "0-9a-fA-F",
};

/**
 * A `[...]` starting at `start`, read as wildmatch.c reads it: its regex and the index after it;
 * undefined where git's match aborts (unclosed, an unknown class), which then matches nothing. A
 * `]` first is literal; `-` makes a range only after a single character (not first, not after a
 * range or a class) and before anything but `]`; a range out of order matches nothing; `[:` with
 * no `:]` before the next `]` is a literal `[`.
 */
function parseBracket(pattern: string, start: number): { regex: string; end: number } | undefined {
  let i = start + 1;
  const negate = pattern[i] === "!" || pattern[i] === "^";
  if (negate) i++;
  let body = "";
  let low: string | undefined; // the character before, which a `-` takes as a range's low end
  for (let first = true; ; first = false) {
    let c = pattern[i];
    if (c === undefined) return undefined;
    // WM_PATHNAME: not even a range or a negation matches a slash.
    if (c === "]" && !first) return { regex: `(?!/)[${negate ? "^" : ""}${body}]`, end: i + 1 };
    if (c === "-" && low !== undefined && pattern[i + 1] !== undefined && pattern[i + 1] !== "]") {
      let high = pattern[++i];
      if (high === "\\") high = pattern[++i];
      if (high === undefined) return undefined;
      if (low <= high) body += `${escapeClassChar(low)}-${escapeClassChar(high)}`;
      low = undefined;
    } else if (c === "[" && pattern[i + 1] === ":") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) return undefined;
      if (close - 1 >= i + 2 && pattern[close - 1] === ":") {
        const name = pattern.slice(i + 2, close - 1);
        const cls = Object.hasOwn(CLASSES, name) ? CLASSES[name] : undefined;
        if (cls === undefined) return undefined; // git: a malformed class makes the pattern match nothing
        body += cls;
        low = undefined;
        i = close;
      } else {
        body += "\\[";
        low = "[";
      }
    } else {
      if (c === "\\") c = pattern[++i];
      if (c === undefined) return undefined;
      body += escapeClassChar(c);
      low = c;
    }
    i++;
  }
}

function escapeClassChar(c: string): string {
  return /[\\\]\[^-]/.test(c) ? `\\${c}` : c;
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}
