/**
 * A unified diff of two texts (`diff -u` style, 3 lines of context): pure. The edit script is a
 * longest common subsequence of lines after the common head and tail are set aside; a middle too
 * large for that (over MAX_CELLS) is shown as replaced whole: still a correct diff, only longer.
 */

const CONTEXT = 3;
const MAX_CELLS = 4_000_000;

type Edit = { op: " " | "-" | "+"; line: string };

export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  const edits = editScript(splitLines(oldText), splitLines(newText));
  const hunks = hunksOf(edits);
  if (hunks.length === 0) return "";
  return `--- ${oldName}\n+++ ${newName}\n` + hunks.join("");
}

/** Lines without their ends; a last line without a newline is marked as diff marks it. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  else lines[lines.length - 1] += "\n\\ No newline at end of file";
  return lines;
}

function editScript(a: string[], b: string[]): Edit[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (lines: string[]) => lines.map((line): Edit => ({ op: " ", line }));
  const middle = middleEdits(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  return [...same(a.slice(0, head)), ...middle, ...same(a.slice(a.length - tail))];
}

function middleEdits(a: string[], b: string[]): Edit[] {
  const removed = a.map((line): Edit => ({ op: "-", line }));
  const added = b.map((line): Edit => ({ op: "+", line }));
  if (a.length === 0 || b.length === 0 || (a.length + 1) * (b.length + 1) > MAX_CELLS) return [...removed, ...added];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const edits: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) edits.push({ op: " ", line: a[i++]! }), j++;
    // Removals before additions, as diff -u shows a replaced line.
    else if (i < a.length && (j === b.length || lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) edits.push({ op: "-", line: a[i++]! });
    else edits.push({ op: "+", line: b[j++]! });
  }
  return edits;
}

/** The changed runs with their context, neighbours within 2×CONTEXT lines merged, each with its `@@` header. */
function hunksOf(edits: Edit[]): string[] {
  const changed = edits.map((e, k) => (e.op === " " ? -1 : k)).filter((k) => k >= 0);
  const hunks: string[] = [];
  let start = 0;
  while (start < changed.length) {
    let end = start;
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= 2 * CONTEXT) end++;
    hunks.push(hunkText(edits, Math.max(0, changed[start]! - CONTEXT), Math.min(edits.length, changed[end]! + CONTEXT + 1)));
    start = end + 1;
  }
  return hunks;
}

function hunkText(edits: Edit[], from: number, to: number): string {
  let oldLine = 1;
  let newLine = 1;
  for (const e of edits.slice(0, from)) {
    if (e.op !== "+") oldLine++;
    if (e.op !== "-") newLine++;
  }
  const body = edits.slice(from, to);
  const oldCount = body.filter((e) => e.op !== "+").length;
  const newCount = body.filter((e) => e.op !== "-").length;
  const range = (line: number, n: number) => `${n === 0 ? line - 1 : line}${n === 1 ? "" : `,${n}`}`;
  return `@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@\n` + body.map((e) => `${e.op}${e.line}\n`).join("");
}
