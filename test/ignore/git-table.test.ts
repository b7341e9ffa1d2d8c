import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IgnoreEngine } from "../../src/ignore/engine.js";
import { describeRule } from "../../src/ignore/pattern.js";

/**
 * The ignore engine against the real `git check-ignore --no-index -v`: each row is a tree with
 * rule files; every file and directory in it must get git's verdict, naming the same file, line
 * and pattern.
 */

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** Files to write, relative to the repository's top; a name ending in "/" is an empty directory. */
type Tree = Record<string, string>;

function repo(tree: Tree): string {
  const top = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-ignore-")));
  dirs.push(top);
  execFileSync("git", ["init", "-q"], { cwd: top, env: gitEnv(top) });
  put(top, tree);
  return top;
}

function put(top: string, tree: Tree): void {
  for (const [rel, content] of Object.entries(tree)) {
    const abs = path.join(top, rel);
    if (rel.endsWith("/")) mkdirSync(abs, { recursive: true });
    else {
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
  }
}

/** No global or system git configuration (core.excludesFile) leaks into the comparison. */
function gitEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".no-config"), GIT_CONFIG_NOSYSTEM: "1" };
}

/** Every file and directory under `root` but .git, root-relative. */
function entries(root: string, dir = ""): { rel: string; isDir: boolean }[] {
  const out: { rel: string; isDir: boolean }[] = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (entry.name === ".git") continue;
    const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
    out.push({ rel, isDir: entry.isDirectory() });
    if (entry.isDirectory()) out.push(...entries(root, rel));
  }
  return out;
}

/** git's verdict per path: "source:line (pattern)" for an excluding rule, "-" when not ignored. */
function gitVerdicts(root: string, top: string, rels: string[]): Map<string, string> {
  const out = execFileSync("git", ["check-ignore", "--no-index", "-v", "-n", "-z", "--stdin"], {
    cwd: root,
    env: gitEnv(top),
    input: rels.join("\0") + "\0",
  }).toString();
  const fields = out.split("\0");
  const verdicts = new Map<string, string>();
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [source, line, pattern, rel] = [fields[i]!, fields[i + 1]!, fields[i + 2]!, fields[i + 3]!];
    const ignored = source !== "" && !pattern.startsWith("!");
    verdicts.set(rel, ignored ? `${path.relative(root, path.resolve(top, source)).split(path.sep).join("/")}:${line} (${pattern})` : "-");
  }
  return verdicts;
}

function engineVerdicts(engine: IgnoreEngine, list: { rel: string; isDir: boolean }[], fresh = false): Map<string, string> {
  const verdicts = new Map<string, string>();
  for (const { rel, isDir } of list) {
    const rule = engine.check(rel, isDir, { fresh });
    verdicts.set(rel, rule ? describeRule(rule).replace(/^(\S+:\d+) /, "$1 ") : "-");
  }
  return verdicts;
}

function expectSameAsGit(root: string, top: string, engine = new IgnoreEngine({ root }), fresh = false): void {
  const list = entries(root);
  const git = gitVerdicts(
    root,
    top,
    list.map((e) => e.rel),
  );
  expect([...git.values()].filter((verdict) => verdict !== "-").length).toBeGreaterThan(0);
  expect(Object.fromEntries(engineVerdicts(engine, list, fresh))).toEqual(Object.fromEntries(git));
}

const TABLE: [string, Tree][] = [
  [
    "anchored lines match at the root only",
    {
      ".gitignore": "/.env\n/build\n/dist/\n/src/gen.ts\n",
      ".env": "",
      "sub/.env": "",
      "build/x": "",
      "sub/build/y": "",
      "dist/z": "",
      "sub/dist": "",
      "src/gen.ts": "",
      "lib/src/gen.ts": "",
    },
  ],
  [
    "negation re-includes, but never below an excluded directory",
    {
      ".gitignore": "*.log\n!keep.log\nlogs/\n!logs/important.log\nout/*\n!out/kept\n",
      "a.log": "",
      "keep.log": "",
      "sub/keep.log": "",
      "logs/important.log": "",
      "logs/x": "",
      "out/kept": "",
      "out/gone": "",
    },
  ],
  [
    "a deeper .gitignore overrides a shallower one",
    {
      ".gitignore": "*.tmp\n!*.keep.tmp\ndocs\n",
      "a.tmp": "",
      "b.keep.tmp": "",
      "sub/.gitignore": "!a.tmp\n*.md\n/only-here\n",
      "sub/a.tmp": "",
      "sub/c.tmp": "",
      "sub/r.md": "",
      "sub/only-here": "",
      "sub/deeper/only-here": "",
      "sub/deeper/.gitignore": "!r.md\n",
      "sub/deeper/r.md": "",
      "docs/d.txt": "",
    },
  ],
  [
    "directory-only lines match directories, not files",
    { ".gitignore": "cache/\nfoo/\nnested/dir/\n", "cache/x": "", foo: "", "bar/cache/y": "", "nested/dir/z": "", "a/nested/dir/z": "" },
  ],
  [
    "** matches across directories",
    {
      ".gitignore": "**/gen\nlogs/**\na/**/b\n**/*.pyc\nx**y\n**/deep/**/*.o\n",
      "gen/1": "",
      "p/q/gen": "",
      "logs/a/b": "",
      logs2: "",
      "a/b": "",
      "a/x/y/b": "",
      "m/n.pyc": "",
      xzzy: "",
      "x/y": "",
      "deep/k.o": "",
      "r/deep/s/t/k.o": "",
    },
  ],
  [
    "escapes, trailing spaces and comments",
    {
      ".gitignore": "\\#hash\n# a comment\n\\!bang\ntrail\\ \nspaces   \n\\*star\n",
      "#hash": "",
      "!bang": "",
      "trail ": "",
      spaces: "",
      "*star": "",
      xstar: "",
    },
  ],
  [
    "brackets and ? follow wildmatch",
    {
      ".gitignore": "[abc].txt\n[!a-c]?.md\n[[:digit:]]*.dat\nq?\n",
      "a.txt": "",
      "d.txt": "",
      "dx.md": "",
      "ax.md": "",
      "1.dat": "",
      "x.dat": "",
      qz: "",
      "q/z": "",
    },
  ],
  [
    "? and brackets match bytes of the UTF-8 name, ranges are byte ranges; a literal start then ** as git has it",
    {
      ".gitignore": "?\n??x\n[é]\n[z-a]q\n/ZZ**\nd/YY**/**\n",
      ä: "",
      a: "",
      äx: "",
      é: "",
      日: "",
      q: "",
      "ZZ/deep/f": "",
      "d/YYc": "",
      "d/YY": "",
    },
  ],
  ["built-in names are never synced", { "node_modules/x/y.js": "", "sub/node_modules/z": "", ".uspark/state.json": "", "src/a.ts": "" }],
];

describe("the ignore engine gives git check-ignore's verdict", () => {
  for (const [name, tree] of TABLE) {
    it(`should agree with git: ${name}`, () => {
      const top = repo(tree);
      if (name.startsWith("built-in")) {
        // git knows nothing of our built-ins: they are ours alone.
        const engine = new IgnoreEngine({ root: top });
        expect(engine.check("node_modules/x/y.js", false)?.source).toBe("built-in");
        expect(engine.check("sub/node_modules/z", false)?.source).toBe("built-in");
        expect(engine.check(".uspark/state.json", false)?.source).toBe("built-in");
        expect(engine.check(".git", false)?.source).toBe("built-in");
        expect(engine.check("src/a.ts", false)).toBeUndefined();
        return;
      }
      expectSameAsGit(top, top);
    });
  }

  it("should apply .git/info/exclude below the root's own rules", () => {
    const top = repo({
      ".git/info/exclude": "secret*\n*.key\n",
      ".gitignore": "!public.key\n",
      "secret.txt": "",
      "a/secret2": "",
      "public.key": "",
      "b.key": "",
    });
    expectSameAsGit(top, top);
  });

  it("should apply the .gitignore files above the root inside the same repository", () => {
    const top = repo({
      ".gitignore": "pkg/*.gen\n*.bak\n",
      "pkg/.gitignore": "!keep.bak\n",
      "pkg/a.gen": "",
      "pkg/keep.bak": "",
      "pkg/x.bak": "",
      "pkg/sub/a.gen": "",
    });
    const root = path.join(top, "pkg");
    expectSameAsGit(root, top);
  });

  it("should follow a .gitignore changed mid-session", () => {
    const top = repo({ ".gitignore": "*.log\n", "a.log": "", ".env": "", "build/out.js": "" });
    const engine = new IgnoreEngine({ root: top });
    const changed: string[] = [];
    engine.onRulesChanged((dirRel) => changed.push(dirRel));
    expectSameAsGit(top, top, engine);
    writeFileSync(path.join(top, ".gitignore"), "/.env\nbuild/\n");
    // Same size class or same second: the stamp still differs by inode times; force a distinct mtime.
    utimesSync(path.join(top, ".gitignore"), new Date(), new Date(Date.now() + 5000));
    expectSameAsGit(top, top, engine, true);
    expect(changed).toContain("");
  });

  it("should name the rule as file:line (pattern)", () => {
    const top = repo({ ".gitignore": "# secrets\n\n/.env\n", ".env": "" });
    expect(describeRule(new IgnoreEngine({ root: top }).check(".env", false)!)).toBe(".gitignore:3 (/.env)");
  });
});
