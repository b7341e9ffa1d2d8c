import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lastMatch, parseLine } from "../../src/ignore/pattern.js";
import { MEMORY_TMPDIR } from "../kit/memory-tmpdir.js";

/**
 * One gitignore line against one path, as wildmatch.c decides: a truth table of the edge cases
 * (`**`, leading and trailing slashes, brackets and classes, escapes, bytes), each row checked
 * against the real `git check-ignore --no-index` too; and lines made to backtrack (a .gitignore
 * in a cloned repository is anyone's text) answer at once.
 */

/** [line, path relative to the .gitignore's directory ("/" at the end: a directory), ignored]. */
type Row = readonly [string, string, boolean];

const TABLE: readonly Row[] = [
  // ** at the start, the end, between slashes; elsewhere it is a *
  ["**/foo", "foo", true],
  ["**/foo", "a/b/foo", true],
  ["**/foo", "afoo", false],
  ["foo/**", "foo/a/b", true],
  ["foo/**", "foo", false],
  ["a/**/b", "a/b", true],
  ["a/**/b", "a/x/y/b", true],
  ["a/**/b", "a/xb", false],
  ["a**b", "axyb", true],
  ["x/a**b", "x/a/b", false],
  // a literal start dir.c compares itself: the ** after it is at the start of wildmatch's pattern
  ["ZZ**/c", "ZZc", true],
  ["ZZ**/c", "ZZx/y/c", true],
  // leading, middle and trailing slashes
  ["/foo", "foo", true],
  ["/foo", "a/foo", false],
  ["a/foo", "a/foo", true],
  ["a/foo", "b/a/foo", false],
  ["foo/", "foo/", true],
  ["foo/", "foo", false],
  ["foo/", "a/foo/", true],
  ["a/*/c", "a/b/c", true],
  ["a/*/c", "a/b/d/c", false],
  ["x/a*c", "x/ab/c", false],
  // brackets and classes
  ["[[:digit:]]x", "1x", true],
  ["[[:digit:]]x", "ax", false],
  ["[[:bogus:]]x", "ax", false],
  ["[!a]x", "bx", true],
  ["[!a]x", "ax", false],
  ["[^a]x", "bx", true],
  ["[a-c]x", "bx", true],
  ["[z-a]x", "zx", true],
  ["[z-a]x", "yx", false],
  ["[]]x", "]x", true],
  ["[a-]x", "-x", true],
  ["[[:x", "[[:x", false],
  ["[[:]x", ":x", true],
  ["y/[/]x", "y//x", false],
  ["[\\]]x", "]x", true],
  ["[a\\-c]x", "-x", true],
  ["[a\\-c]x", "bx", false],
  ["[abc", "[abc", false],
  // escapes and trailing spaces
  ["\\*x", "*x", true],
  ["\\*x", "ax", false],
  ["\\#x", "#x", true],
  ["\\!x", "!x", true],
  ["x\\ ", "x ", true],
  ["x  ", "x", true],
  ["x\\", "x", false],
  ["\\[a]", "[a]", true],
  // bytes: ? and brackets take one byte of the UTF-8 name
  ["?", "ä", false],
  ["??", "ä", true],
  ["[ä]", "ä", false],
  ["*ä*", "xäy", true],
];

/** Lines made to backtrack: a regular expression takes seconds to minutes on each. */
const HOSTILE: readonly (readonly [string, string])[] = [
  ["a*a*a*a*a*a*a*a*b", "a".repeat(60)],
  ["*a*a*a*a*a*a*a*a*a*a*a*a*b", "a".repeat(200)],
  ["[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*b", "a".repeat(200)],
  ["?*?*?*?*?*?*?*?*?*?*b", "a".repeat(200)],
  ["x/**/a*a*a*a*a*a*a*b", `x/${"a/".repeat(40)}${"a".repeat(60)}`],
  ["**/**/**/**/**/**/**/**/b", `${"a/".repeat(100)}c`],
];

function ignored(line: string, rel: string): boolean {
  const isDir = rel.endsWith("/");
  const local = isDir ? rel.slice(0, -1) : rel;
  const rule = parseLine(line, ".gitignore", 1);
  return rule !== undefined && lastMatch([rule], local, path.posix.basename(local), isDir) !== undefined;
}

const top = realpathSync(mkdtempSync(path.join(MEMORY_TMPDIR, "uspark-wildmatch-")));
afterAll(() => rmSync(top, { recursive: true, force: true }));

/** git's answer for each row: every row in its own directory with its own .gitignore, the path made for real. */
function gitAnswers(rows: readonly Row[]): boolean[] {
  const env = { ...process.env, HOME: top, XDG_CONFIG_HOME: path.join(top, ".no-config"), GIT_CONFIG_NOSYSTEM: "1" };
  execFileSync("git", ["init", "-q"], { cwd: top, env });
  const asked = rows.map(([line, rel], i) => {
    mkdirSync(path.join(top, `r${i}`));
    writeFileSync(path.join(top, `r${i}`, ".gitignore"), `${line}\n`);
    const abs = path.join(top, `r${i}`, rel);
    if (rel.endsWith("/")) mkdirSync(abs, { recursive: true });
    else {
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, "");
    }
    return `r${i}/${rel.replace(/\/$/, "")}`;
  });
  const out = execFileSync("git", ["check-ignore", "--no-index", "-v", "-n", "-z", "--stdin"], {
    cwd: top,
    env,
    input: asked.join("\0") + "\0",
  }).toString("utf8");
  const fields = out.split("\0");
  const answers = new Map<string, boolean>();
  for (let i = 0; i + 3 < fields.length; i += 4) answers.set(fields[i + 3]!, fields[i] !== "" && !fields[i + 2]!.startsWith("!"));
  return asked.map((rel) => answers.get(rel) ?? false);
}

describe("a gitignore line against a path, as wildmatch.c decides", () => {
  it("answers each row of the truth table, as git does", () => {
    const rows = TABLE.map(([line, rel, expected]) => `${JSON.stringify(line)} ${JSON.stringify(rel)} ${expected}`);
    expect(TABLE.map(([line, rel]) => `${JSON.stringify(line)} ${JSON.stringify(rel)} ${ignored(line, rel)}`)).toEqual(rows);
    const git = gitAnswers(TABLE);
    expect(TABLE.map(([line, rel], i) => `${JSON.stringify(line)} ${JSON.stringify(rel)} ${git[i]}`)).toEqual(rows);
  });

  it.each(HOSTILE)("answers %j at once, however it would backtrack", (line, rel) => {
    const started = performance.now();
    expect(ignored(line, rel)).toBe(false);
    // A regular expression took 20 s on the first row; the bound leaves room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
