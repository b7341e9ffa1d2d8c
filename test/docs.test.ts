import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The documentation holds together: every link of README.md and docs/*.md resolves (a file of the
 * repository, a heading of the page it names), and every comment or test in src/ and test/ that
 * cites a docs/ page cites one that exists, at a heading that exists. Nothing cites a design
 * document outside the repository.
 */

const repo = fileURLToPath(new URL("../", import.meta.url));
const pages = [
  "README.md",
  ...readdirSync(path.join(repo, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The relative links of a Markdown text (`[x](target)`, images too), outside code blocks. */
function linksIn(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((link) => !/^[a-z]+:/.test(link));
}

/** The text of every comment in a TypeScript or JavaScript source (a path in a string is data, not a citation). */
function commentsOf(source: string): string[] {
  const file = ts.createSourceFile("source.ts", source, ts.ScriptTarget.Latest, true);
  const ranges = new Map<number, ts.CommentRange>();
  const visit = (node: ts.Node): void => {
    for (const range of [...(ts.getLeadingCommentRanges(source, node.pos) ?? []), ...(ts.getTrailingCommentRanges(source, node.end) ?? [])])
      ranges.set(range.pos, range);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...ranges.values()].map((range) => source.slice(range.pos, range.end));
}

/** The docs/ pages the comments of a source cite (`docs/sync.md#the-base`); not acai's design-docs/tools.md. */
function citationsIn(source: string): string[] {
  if (!source.includes("docs/")) return []; // most files: no need to parse them
  return commentsOf(source).flatMap((comment) => [...comment.matchAll(/(?<![\w./-])docs\/[\w-]+\.md(?:#[\w-]+)?/g)].map((m) => m[0]));
}

/** The anchors of a Markdown page's headings (outside code blocks), as GitHub makes them. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(path.join(repo, file), "utf8").replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

/** Why `target#fragment`, seen from the page `from` ("" for the repository's root), does not resolve, or undefined. */
function unresolved(from: string, target: string): string | undefined {
  const [file, fragment] = target.split("#") as [string, string | undefined];
  const resolved = file === "" ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
  if (!existsSync(path.join(repo, resolved))) return `${target}: no file ${resolved}`;
  if (fragment === undefined) return undefined;
  if (!resolved.endsWith(".md")) return `${target}: an anchor in a file that is not Markdown`;
  return anchorsOf(resolved).has(fragment) ? undefined : `${target}: no heading #${fragment} in ${resolved}`;
}

/** Every file under src/ and test/ (no installed packages). */
function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(rel);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [rel] : [];
  });
}

describe("the documentation's links", () => {
  it("README.md and docs/ have pages with links to check", () => {
    expect(pages).toEqual(expect.arrayContaining(["README.md", "docs/api.md", "docs/sync.md", "docs/commands.md", "docs/log-events.md"]));
    expect(linksIn(readFileSync(path.join(repo, "README.md"), "utf8")).length).toBeGreaterThan(0);
  });

  it.each(pages)("every link of %s resolves: a file of the repository, a heading of its page", (page) => {
    const problems = linksIn(readFileSync(path.join(repo, page), "utf8")).map((link) => unresolved(page, link));
    expect(problems.filter(Boolean).map((problem) => `${page}: ${problem}`)).toEqual([]);
  });
});

describe("citations in src/ and test/", () => {
  const files = [...sourceFiles("src"), ...sourceFiles("test")];

  it("cite docs pages and headings that exist", () => {
    const cited = files.flatMap((file) => citationsIn(readFileSync(path.join(repo, file), "utf8")).map((target) => ({ file, target })));
    expect(cited.length).toBeGreaterThan(40);
    const problems = cited.map(({ file, target }) => ({ file, problem: unresolved("", target) })).filter(({ problem }) => problem);
    expect(problems.map(({ file, problem }) => `${file}: ${problem}`)).toEqual([]);
  });

  it("cite no design document outside the repository", () => {
    const mentions = files.filter((file) => /\bdesign(\.md\b|\s*§)/.test(readFileSync(path.join(repo, file), "utf8")));
    expect(mentions).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("GitHub's anchors: lower case, punctuation dropped, each space a hyphen", () => {
    expect(anchor("The base")).toBe("the-base");
    expect(anchor("status --json")).toBe("status---json");
    expect(anchor("The file store: --data")).toBe("the-file-store---data");
    expect(anchor("Tokens and device login (uspark 0.3)")).toBe("tokens-and-device-login-uspark-03");
  });

  it("links outside code blocks, relative ones only", () => {
    const text = "[a](docs/a.md) [b](https://x.org) ![c](screens/c.png)\n```sh\n[d](nowhere.md)\n```\n[e](#e)";
    expect(linksIn(text)).toEqual(["docs/a.md", "screens/c.png", "#e"]);
  });

  it("a citation is a docs/ page, with its anchor, in a comment; a path in a string is data", () => {
    expect(citationsIn("// the base (docs/sync.md#the-base), see docs/api.md.\nconst a = 1;")).toEqual([
      "docs/sync.md#the-base",
      "docs/api.md",
    ]);
    expect(citationsIn("/**\n * The base (docs/sync.md#the-base).\n */\nexport const b = `docs/x.md`; // docs/api.md")).toEqual([
      "docs/sync.md#the-base",
      "docs/api.md",
    ]);
    expect(citationsIn('write("docs/notes.md", "x");')).toEqual([]);
    expect(citationsIn("travisennis/acai docs/design-docs/tools.md")).toEqual([]);
  });

  it("a citation of a page or heading that does not exist is found", () => {
    expect(unresolved("", "docs/nowhere.md")).toMatch(/no file docs\/nowhere\.md/);
    expect(unresolved("", "docs/sync.md#no-such-heading")).toMatch(/no heading #no-such-heading/);
    expect(unresolved("", "docs/sync.md#the-base")).toBeUndefined();
    expect(unresolved("docs/agents.md", "../fixtures/README.md")).toBeUndefined();
  });
});
