#!/usr/bin/env node
// A monorepo-like tree for the scale benches (issue 45): `files` small source files in nested
// packages (packages/<name>/src/<area>/<module>/..., tests, a README and package.json each),
// sizes from a few dozen bytes to a few KiB, every mtime set long ago (an existing checkout: a
// stat read within seconds of a write is not trusted and gets hashed). Deterministic: the same
// `files` and `seed` give the same paths and bytes, so uspark and git measure one tree.
//
//   node bench/lib/monorepo-tree.mjs --root DIR --files 50000 [--seed 1]
//
// Self-contained on purpose (node: builtins only): other branches copy this file alone.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** All files' mtime: 2020-01-01, long before any run. */
const LONG_AGO = new Date("2020-01-01T00:00:00Z");
/** Files per leaf directory, at most: real trees hold a few to a few dozen. */
const PER_DIR = 24;
const AREAS = ["core", "util", "api", "ui", "model", "io", "cli", "test"];
const WORDS = [
  "alpha",
  "beta",
  "gamma",
  "delta",
  "omega",
  "sigma",
  "kappa",
  "lambda",
  "theta",
  "zeta",
  "node",
  "tree",
  "item",
  "list",
  "map",
  "set",
];
const EXTENSIONS = [".ts", ".ts", ".ts", ".tsx", ".js", ".json", ".md", ".css"];

/** mulberry32: a small seeded generator, so the tree does not depend on Math.random. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The relative directory of leaf `leaf`: about 40 leaves a package: 8 areas of 5 modules. */
function leafDir(leaf) {
  const pkg = Math.floor(leaf / 40);
  const inPkg = leaf % 40;
  const area = AREAS[inPkg % AREAS.length];
  const module = Math.floor(inPkg / AREAS.length);
  const group = pkg % 7 === 0 ? "apps" : "packages";
  return path.join(group, `${WORDS[pkg % WORDS.length]}-${pkg}`, area === "test" ? "test" : "src", area, `mod${module}`);
}

/** One file's text: a few exports with a size between ~40 bytes and ~4 KiB, mostly small. */
function fileText(next, i, ext) {
  const lines = 1 + Math.floor(next() ** 3 * 120);
  let text = ext === ".json" ? "{\n" : ext === ".md" ? `# module ${i}\n\n` : `// module ${i}\n`;
  for (let line = 0; line < lines; line++) {
    const word = WORDS[Math.floor(next() * WORDS.length)];
    if (ext === ".json") text += `  "${word}${line}": ${Math.floor(next() * 1e6)},\n`;
    else if (ext === ".md") text += `The ${word} of ${i} is ${Math.floor(next() * 1e6)}.\n`;
    else if (ext === ".css") text += `.${word}-${line} { margin: ${Math.floor(next() * 40)}px; }\n`;
    else text += `export const ${word}${line}_${i} = ${Math.floor(next() * 1e6)};\n`;
  }
  return ext === ".json" ? `${text}  "i": ${i}\n}\n` : text;
}

/**
 * Writes `files` files under `root` (made if missing); returns their relative paths, in
 * write order. Each package also gets a package.json and a README.md, counted in `files`.
 */
export function writeMonorepoTree(root, files, { seed = 1 } = {}) {
  const next = random(seed);
  const written = [];
  const write = (rel, text) => {
    const file = path.join(root, rel);
    writeFileSync(file, text);
    utimesSync(file, LONG_AGO, LONG_AGO);
    written.push(rel);
  };
  for (let leaf = 0; written.length < files; leaf++) {
    const dir = leafDir(leaf);
    mkdirSync(path.join(root, dir), { recursive: true });
    if (leaf % 40 === 0) {
      const pkgDir = path.join(dir, "..", "..", "..");
      write(path.join(pkgDir, "package.json"), `{ "name": "@mono/${path.basename(pkgDir)}", "version": "1.0.${leaf}" }\n`);
      if (written.length < files) write(path.join(pkgDir, "README.md"), `# ${path.basename(pkgDir)}\n\nPackage ${leaf / 40}.\n`);
    }
    const count = Math.min(4 + Math.floor(next() * (PER_DIR - 4)), files - written.length);
    for (let k = 0; k < count; k++) {
      const ext = EXTENSIONS[Math.floor(next() * EXTENSIONS.length)];
      const i = written.length;
      write(path.join(dir, `${WORDS[i % WORDS.length]}${i}${ext}`), fileText(next, i, ext));
    }
  }
  for (const dir of new Set(written.map((rel) => path.dirname(rel)))) utimesSync(path.join(root, dir), LONG_AGO, LONG_AGO);
  return written;
}

function main(argv) {
  const option = (name, otherwise) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? otherwise : argv[i + 1];
  };
  const root = option("root");
  const files = Number(option("files", 50_000));
  const seed = Number(option("seed", 1));
  if (!root || !Number.isInteger(files) || files < 0) {
    console.error("usage: node bench/lib/monorepo-tree.mjs --root DIR [--files 50000] [--seed 1]");
    process.exit(2);
  }
  const started = performance.now();
  const written = writeMonorepoTree(path.resolve(root), files, { seed });
  console.error(`${written.length} files under ${root} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
