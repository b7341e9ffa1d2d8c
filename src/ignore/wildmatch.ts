/**
 * git's wildmatch.c (dowild) with WM_PATHNAME, on byte strings (one character per byte, see
 * `bytesOf` in pattern.ts). A port, not a regular expression: a `*` that cannot find what follows
 * it anywhere in the rest of the text gives up the whole match (ABORT_ALL), and a `*` that met a
 * slash gives up back to the nearest `**` (ABORT_TO_STARSTAR). So a line such as
 * `a*a*a*a*a*a*a*a*b` answers in time linear-ish in the name, where a backtracking regular
 * expression took minutes: a .gitignore of a cloned repository is anyone's text.
 */

const MATCH = 0;
const NOMATCH = 1;
const ABORT_ALL = -1;
const ABORT_TO_STARSTAR = -2;
type Outcome = typeof MATCH | typeof NOMATCH | typeof ABORT_ALL | typeof ABORT_TO_STARSTAR;

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

/** Whether `text` matches `pattern` as a whole, as git's `wildmatch(pattern, text, WM_PATHNAME)`. */
export function wildmatch(pattern: string, text: string): boolean {
  return dowild(pattern, 0, text, 0) === MATCH;
}

/** `*?[\`: what the fast skip of a star must not take for a literal (git's is_glob_special). */
function isGlobSpecial(c: string | undefined): boolean {
  return c === "*" || c === "?" || c === "[" || c === "\\";
}

/** dowild from pattern index `p` and text index `t`; a `**` where this call starts is at a segment's start, as in git. */
function dowild(pattern: string, p: number, text: string, t: number): Outcome {
  const start = p;
  for (; p < pattern.length; t++, p++) {
    const pc = pattern.charCodeAt(p);
    if (t >= text.length && pc !== 0x2a) return ABORT_ALL;
    const tc = text.charCodeAt(t);
    if (pc === 0x3f) {
      if (tc === SLASH) return NOMATCH; // `?` matches anything but a slash
    } else if (pc === 0x2a) {
      return star(pattern, p, text, t, start);
    } else if (pc === 0x5b) {
      const bracket = matchBracket(pattern, p, tc);
      if (typeof bracket !== "number") return bracket.outcome;
      p = bracket;
    } else {
      // A backslash takes the next character literally; a trailing one matches nothing.
      const literal = pc === BACKSLASH ? pattern.charCodeAt(++p) : pc;
      if (tc !== literal) return NOMATCH;
    }
  }
  return t < text.length ? NOMATCH : MATCH;
}

/** The star(s) at `p` against the text from `t`, to the end of the match. */
function star(pattern: string, p: number, text: string, t: number, start: number): Outcome {
  let matchSlash = false;
  if (pattern[++p] === "*") {
    const prev = p - 2;
    while (pattern[++p] === "*");
    const atSegmentStart = prev < start || pattern[prev] === "/";
    const atSegmentEnd = p === pattern.length || pattern[p] === "/" || (pattern[p] === "\\" && pattern[p + 1] === "/");
    if (atSegmentStart && atSegmentEnd) {
      // `**/` may match no directory at all: `a/**/b` matches `a/b`.
      if (pattern[p] === "/" && dowild(pattern, p + 1, text, t) === MATCH) return MATCH;
      matchSlash = true;
    }
  }
  if (p === pattern.length) {
    // A trailing `**` matches everything, a trailing `*` only what has no more slashes.
    return matchSlash || text.indexOf("/", t) < 0 ? MATCH : NOMATCH;
  }
  if (!matchSlash && pattern[p] === "/") {
    // One star then a slash: the rest of this segment, then the slash.
    const slash = text.indexOf("/", t);
    return slash < 0 ? NOMATCH : dowild(pattern, p + 1, text, slash + 1);
  }
  return starTries(pattern, p, text, t, matchSlash);
}

/** Each place from `t` on where the pattern after a star may continue, as dowild's loop tries them. */
function starTries(pattern: string, p: number, text: string, t: number, matchSlash: boolean): Outcome {
  const next = pattern[p];
  for (; t < text.length; t++) {
    if (!isGlobSpecial(next)) {
      // The star takes everything before the next occurrence of the literal that follows it.
      while (t < text.length && (matchSlash || text[t] !== "/") && text[t] !== next) t++;
      if (text[t] !== next) return matchSlash ? ABORT_ALL : ABORT_TO_STARSTAR;
    }
    const matched = dowild(pattern, p, text, t);
    if (matched !== NOMATCH) {
      if (!matchSlash || matched !== ABORT_TO_STARSTAR) return matched;
    } else if (!matchSlash && text[t] === "/") return ABORT_TO_STARSTAR;
  }
  return ABORT_ALL;
}

/**
 * The bracket opening at `p` against the byte `tc`: the index of its closing `]`, or the outcome
 * where it does not match (NOMATCH) or makes the whole pattern match nothing (ABORT_ALL: unclosed,
 * an unknown class). Read as wildmatch.c reads it: a `]` first is literal; `-` makes a range only
 * after a single character and before anything but `]`; `[:` with no `:]` before the next `]` is
 * a literal `[`; nothing in it matches a slash.
 */
function matchBracket(pattern: string, p: number, tc: number): number | { outcome: Outcome } {
  let pc: string | undefined = pattern[++p];
  const negated = pc === "!" || pc === "^";
  if (negated) pc = pattern[++p];
  let prev: string | undefined;
  let matched = false;
  do {
    if (pc === undefined) return { outcome: ABORT_ALL };
    if (pc === "\\") {
      pc = pattern[++p];
      if (pc === undefined) return { outcome: ABORT_ALL };
      if (tc === pc.charCodeAt(0)) matched = true;
    } else if (pc === "-" && prev !== undefined && p + 1 < pattern.length && pattern[p + 1] !== "]") {
      let high = pattern[++p]!;
      if (high === "\\") {
        const escaped = pattern[++p];
        if (escaped === undefined) return { outcome: ABORT_ALL };
        high = escaped;
      }
      if (tc <= high.charCodeAt(0) && tc >= prev.charCodeAt(0)) matched = true;
      pc = undefined; // a range is no low end for the next `-`
    } else if (pc === "[" && pattern[p + 1] === ":") {
      const close = pattern.indexOf("]", p + 2);
      if (close < 0) return { outcome: ABORT_ALL };
      if (close - 1 < p + 2 || pattern[close - 1] !== ":") {
        if (tc === 0x5b) matched = true; // no `:]`: a literal `[`, and the `:` is read next
      } else {
        const inClass = CLASSES.get(pattern.slice(p + 2, close - 1));
        if (inClass === undefined) return { outcome: ABORT_ALL };
        if (inClass(tc)) matched = true;
        p = close;
        pc = undefined;
      }
    } else if (tc === pc.charCodeAt(0)) matched = true;
    prev = pc;
    pc = pattern[++p];
  } while (pc !== "]");
  return matched === negated || tc === SLASH ? { outcome: NOMATCH } : p;
}

const between = (low: string, high: string) => (c: number) => c >= low.charCodeAt(0) && c <= high.charCodeAt(0);
const isUpper = between("A", "Z");
const isLower = between("a", "z");
const isDigit = between("0", "9");
const isAlpha = (c: number) => isUpper(c) || isLower(c);
const isPunct = (c: number) => between("!", "/")(c) || between(":", "@")(c) || between("[", "`")(c) || between("{", "~")(c);

/** The classes git knows, on bytes as git's own ctype.c has them (no locale). */
const CLASSES: ReadonlyMap<string, (c: number) => boolean> = new Map([
  ["alnum", (c: number) => isAlpha(c) || isDigit(c)],
  ["alpha", isAlpha],
  ["blank", (c: number) => c === 0x20 || c === 0x09],
  ["cntrl", (c: number) => c < 0x20 || c === 0x7f],
  ["digit", isDigit],
  ["graph", between("!", "~")],
  ["lower", isLower],
  ["print", between(" ", "~")],
  ["punct", isPunct],
  // git's own ctype.c: vertical tab and form feed are not space
  ["space", (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d],
  ["upper", isUpper],
  ["xdigit", (c: number) => isDigit(c) || between("a", "f")(c) || between("A", "F")(c)],
]);
