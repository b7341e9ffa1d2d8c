import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IgnoreEngine } from "../../src/ignore/engine.js";
import { MEMORY_TMPDIR } from "../kit/memory-tmpdir.js";
import { rng } from "../reliability/session.js";

/**
 * The ignore engine against `git ls-files -o --exclude-standard` on random trees: random names
 * (non-ASCII ones among them: git matches `?` and brackets against the bytes of the UTF-8 name),
 * random .gitignore files at several depths with lines made from those names (`?`, `*`, `**`,
 * brackets, ranges, classes, negations, escapes, anchors, directory-only lines). Every file git
 * lists must be the engine's to sync, and no other. Each tree comes from its seed:
 * USPARK_IGNORE_SEEDS=17 (or 1-5000) replays one (or runs more).
 */

const SEEDS = seedsFrom(process.env.USPARK_IGNORE_SEEDS ?? "1-300");
const NAME_PARTS = [
  "a",
  "b",
  "c",
  "x",
  "A",
  "Z",
  "1",
  "9",
  ".",
  "-",
  "_",
  " ",
  "ä",
  "é",
  "ß",
  "Ä",
  "ø",
  "日本",
  "€",
  "😀",
  "[",
  "]",
  "!",
  "*",
  "?",
  "\\",
  "#",
];
const NEGATIONS = ["", "", "!", "^"];
/** After a bracket's first character: ranges (one out of order), a `-` at the end, a `[:` that is no class, escapes. */
const BRACKET_TAILS = ["", "x", "a-z", "ä", "0-9", "à-ÿ", "]", "z-a", "-", "-\\]", "[:", "\\a-c", "a-\\z"];
const CLASSES = ["alpha", "digit", "alnum", "upper", "lower", "space", "punct", "xdigit", "print", "graph", "blank", "cntrl"];

const top = realpathSync(mkdtempSync(path.join(MEMORY_TMPDIR, "uspark-ignore-random-")));
afterAll(() => rmSync(top, { recursive: true, force: true }));

function seedsFrom(spec: string): number[] {
  return spec.split(",").flatMap((part) => {
    const [from, to = from] = part.split("-").map(Number) as [number, number?];
    return Array.from({ length: to! - from + 1 }, (_, i) => from + i);
  });
}

interface RandomTree {
  files: string[];
  rules: Map<string, string>;
}

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function randomName(random: () => number): string {
  let name = "";
  const parts = 1 + Math.floor(random() * 4);
  for (let i = 0; i < parts; i++) name += pick(random, NAME_PARTS);
  // Names git or the file system treat apart: dot entries, our built-ins, a trailing space (git trims it from lines).
  return name === "." || name === ".." || name.startsWith(".git") || name.endsWith(" ") ? `n${name.trim()}x` : name;
}

/** A tree of files up to three directories deep. */
function randomFiles(random: () => number): string[] {
  const dirs = [""];
  for (let i = 0; i < 6; i++) {
    const parent = pick(random, dirs);
    if (parent.split("/").length < 3) dirs.push(parent === "" ? randomName(random) : `${parent}/${randomName(random)}`);
  }
  const files = new Set<string>();
  const count = 10 + Math.floor(random() * 25);
  for (let i = 0; i < count; i++) {
    const dir = pick(random, dirs);
    files.add(dir === "" ? randomName(random) : `${dir}/${randomName(random)}`);
  }
  // A name that is both a file and a directory cannot be written: the directory wins.
  return [...files].filter((file) => !dirs.includes(file));
}

/** One character of a line made from `c`: itself, `?`, a bracket with or without it, a class, an escape. */
function mutate(random: () => number, c: string): string {
  const r = random();
  if (r < 0.45) return c;
  if (r < 0.6) return "?";
  if (r < 0.68) return "*";
  if (r < 0.78) return `[${pick(random, NEGATIONS)}${c}${pick(random, BRACKET_TAILS)}]`;
  if (r < 0.84) return `[${pick(random, NEGATIONS)}[:${pick(random, CLASSES)}:]${pick(random, BRACKET_TAILS)}]`;
  if (r < 0.9) return `\\${c}`;
  if (r < 0.95) return "[" + c; // an unclosed bracket
  return "";
}

/** A gitignore line from one of the tree's names or paths, as seen from `dir`. */
function randomLine(random: () => number, files: readonly string[], dir: string): string {
  const under = files
    .filter((file) => dir === "" || file.startsWith(`${dir}/`))
    .map((file) => (dir === "" ? file : file.slice(dir.length + 1)));
  const source = under.length > 0 ? pick(random, under) : randomName(random);
  const segments = source.split("/");
  const whole = random() < 0.6 ? segments.at(-1)! : segments.slice(0, 1 + Math.floor(random() * segments.length)).join("/");
  let line = "";
  for (const c of whole) line += c === "/" ? "/" : mutate(random, c);
  if (random() < 0.1) line = `**/${line}`;
  if (random() < 0.1) line = `/${line}`;
  if (random() < 0.08) line = `${line}/**`;
  if (random() < 0.1) line = `${line}/`;
  if (random() < 0.2) line = `!${line}`;
  return line;
}

function randomTree(seed: number): RandomTree {
  const random = rng(seed);
  const files = randomFiles(random);
  const dirs = ["", ...new Set(files.filter((file) => file.includes("/")).map((file) => path.posix.dirname(file)))];
  const rules = new Map<string, string>();
  for (const dir of dirs) {
    if (dir !== "" && random() < 0.5) continue;
    const lines = Array.from({ length: 1 + Math.floor(random() * 6) }, () => randomLine(random, files, dir));
    rules.set(dir === "" ? ".gitignore" : `${dir}/.gitignore`, `${lines.join("\n")}\n`);
  }
  return { files, rules };
}

function write(root: string, tree: RandomTree): void {
  for (const [file, text] of [...tree.files.map((f) => [f, ""] as const), ...tree.rules]) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
}

/** What git would add, per tree: the untracked files it does not ignore, by tree (the first path segment). */
function gitKept(): Map<string, Set<string>> {
  const env = { ...process.env, HOME: top, XDG_CONFIG_HOME: path.join(top, ".no-config"), GIT_CONFIG_NOSYSTEM: "1" };
  const out = execFileSync("git", ["ls-files", "-o", "--exclude-standard", "-z"], { cwd: top, env, maxBuffer: 1 << 28 }).toString("utf8");
  const kept = new Map<string, Set<string>>();
  for (const file of out.split("\0").filter(Boolean)) {
    const slash = file.indexOf("/");
    const tree = file.slice(0, slash);
    if (!kept.has(tree)) kept.set(tree, new Set());
    kept.get(tree)!.add(file.slice(slash + 1));
  }
  return kept;
}

/** The engine's verdict on one file; a throw (a rule it cannot compile) is a difference too. */
function verdict(kept: () => boolean): string {
  try {
    return kept() ? "keeps it" : "ignores it";
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
}

describe("the ignore engine keeps what git ls-files -o --exclude-standard lists, on random trees", () => {
  it(`agrees with git on ${SEEDS.length} random trees (seeds ${SEEDS[0]}-${SEEDS.at(-1)})`, () => {
    execFileSync("git", ["init", "-q"], { cwd: top, env: { ...process.env, HOME: top, GIT_CONFIG_NOSYSTEM: "1" } });
    const trees = new Map(SEEDS.map((seed) => [seed, randomTree(seed)]));
    for (const [seed, tree] of trees) write(path.join(top, `s${seed}`), tree);
    const git = gitKept();
    let files = 0;
    const differences: string[] = [];
    for (const [seed, tree] of trees) {
      const root = path.join(top, `s${seed}`);
      const engine = new IgnoreEngine({ root });
      const kept = git.get(`s${seed}`) ?? new Set();
      for (const file of [...tree.files, ...tree.rules.keys()]) {
        files++;
        const ours = verdict(() => engine.check(file, false) === undefined);
        const theirs = kept.has(file) ? "keeps it" : "ignores it";
        if (ours !== theirs)
          differences.push(
            `seed ${seed}: ${JSON.stringify(file)} git ${theirs}, uspark ${ours}; rules ${JSON.stringify(Object.fromEntries(tree.rules))}`,
          );
      }
    }
    const throws = differences.filter((line) => line.includes("uspark throws")).length;
    console.log(`ignore vs git: ${trees.size} trees, ${files} files, ${differences.length} differences (${throws} of them a throw)`);
    expect(differences.slice(0, 10), `${differences.length} of ${files} files differ (replay one with USPARK_IGNORE_SEEDS=<seed>)`).toEqual(
      [],
    );
  });
});
