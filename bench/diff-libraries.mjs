#!/usr/bin/env node
// Issue 47 item 5: is a well-kept diff library (jsdiff, npm `diff`) at least as fast as the
// hand-written capped diff (src/text/unified-diff.ts) within the commit page's budget? Not a
// dependency: give an unpacked copy (`npm pack diff && tar xzf diff-*.tgz`) with --jsdiff.
// Each case is one file's diff as the commit page makes it (256 KiB a side at most, 1000 lines
// shown, src/server/web/page-budget.ts): median time of --rounds runs, and the -/+ lines made.
//
//   npm run build && node bench/diff-libraries.mjs --jsdiff /tmp/jsdiff/package [--rounds 9]

import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, otherwise) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : otherwise);
const jsdiffDir = option("jsdiff");
if (!jsdiffDir) {
  console.error("bench/diff-libraries.mjs: give --jsdiff DIR, an unpacked `npm pack diff`");
  process.exit(2);
}
const rounds = Number(option("rounds", 9));
const jsdiff = await import(pathToFileURL(path.join(path.resolve(jsdiffDir), "libesm", "index.js")).href);
const { diffLines } = await import(pathToFileURL(path.join(here, "..", "dist", "text", "unified-diff.js")).href);
const { FILE_DIFF_BUDGET, MAX_DIFF_SIDE_BYTES } = await import(
  pathToFileURL(path.join(here, "..", "dist", "server", "web", "page-budget.js")).href
);

const LINES = MAX_DIFF_SIDE_BYTES / 16;
const numbered = (tag, changed = () => false) =>
  Array.from({ length: LINES }, (_, i) => `${changed(i) ? "y" : tag}${i}`.padEnd(15, ".") + "\n").join("");
const base = numbered("x");
const middle = (n) => (i) => i >= (LINES - n) / 2 && i < (LINES + n) / 2;
const CASES = {
  "one line changed": numbered("x", (i) => i === LINES / 2),
  "a block of 998 lines replaced (the bench's heaviest)": numbered("x", middle(998)),
  "a block of 4000 lines replaced": numbered("x", middle(4000)),
  "every 100th line changed (163 edits spread out)": numbered("x", (i) => i % 100 === 0),
  "added file (its 128 KiB head against nothing)": undefined,
};

function ours(a, b) {
  const d = diffLines(a, b, "a/f", "b/f", { maxLines: FILE_DIFF_BUDGET.lines, maxCells: FILE_DIFF_BUDGET.cells });
  return d.lines;
}

/** jsdiff's structured patch as the page would show it: the same 1000 lines at most. */
function theirs(a, b) {
  const patch = jsdiff.structuredPatch("a/f", "b/f", a, b, "", "", { context: 3 });
  const lines = ["--- a/f", "+++ b/f"];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`, ...hunk.lines);
    if (lines.length >= FILE_DIFF_BUDGET.lines) break;
  }
  return lines.slice(0, FILE_DIFF_BUDGET.lines);
}

function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)];
}

function timed(make, a, b) {
  const times = [];
  let lines;
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    lines = make(a, b);
    times.push(performance.now() - started);
  }
  const changes = lines.filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l)).length;
  return { ms: median(times), changes };
}

console.log(
  `one file's diff, ${MAX_DIFF_SIDE_BYTES / 1024} KiB a side, ${FILE_DIFF_BUDGET.lines} lines shown at most; median of ${rounds}; node ${process.version}`,
);
console.log(`${"case".padEnd(56)} ${"ours ms".padStart(9)} ${"jsdiff ms".padStart(10)}   -/+ lines shown (ours / jsdiff)`);
for (const [name, changed] of Object.entries(CASES)) {
  const [a, b] = changed === undefined ? ["", base.slice(0, FILE_DIFF_BUDGET.bytes)] : [base, changed];
  const o = timed(ours, a, b);
  const t = timed(theirs, a, b);
  console.log(`${name.padEnd(56)} ${o.ms.toFixed(1).padStart(9)} ${t.ms.toFixed(1).padStart(10)}   ${o.changes} / ${t.changes}`);
}
