/**
 * A unified diff of two texts (`diff -u` style, 3 lines of context): pure. The edit script is a
 * longest common subsequence of lines after the common head and tail are set aside; a middle too
 * large for that (over MAX_CELLS) is shown as replaced whole: still a correct diff, only longer.
 * The script is kept as one byte per line of the middle, and lines are made only as far as the
 * caller's cap (the web view's page budget), so a large change costs its two texts' lines and
 * little more.
 */

const CONTEXT = 3;
/** The largest LCS table (its cells: middle lines of one side + 1 times the other's), 16 MB. */
export const MAX_CELLS = 4_000_000;
const SAME = 0;
const DEL = 1;
const ADD = 2;
const MARKS = [" ", "-", "+"] as const;

/** The lines of a diff (without their ends; a line may carry its "\ No newline" note after a \n). */
export interface DiffLines {
  lines: string[];
  /** The diff went on past `maxLines`: the lines shown are its start. */
  cut: boolean;
  /** The cells of the LCS table it filled (0 when the middle was shown replaced whole): the work it did. */
  cells: number;
}

export interface DiffCaps {
  /** Lines of diff made at most (headers included). */
  maxLines?: number;
  /** The largest LCS table to fill; a larger middle is shown replaced whole (MAX_CELLS at most). */
  maxCells?: number;
}

/** The common head and tail of `a` and `b` (`head`, `tail` lines) and the ops of the middle between them. */
interface Script {
  a: string[];
  b: string[];
  head: number;
  ops: Uint8Array;
  tail: number;
  cells: number;
}

/** Where a walk over the script is: position k, line i of `a` and j of `b`. */
interface Cursor {
  k: number;
  i: number;
  j: number;
}

export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  return diffLines(oldText, newText, oldName, newName)
    .lines.map((line) => `${line}\n`)
    .join("");
}

/** The diff as lines, within `caps`; no lines when the texts are equal. */
export function diffLines(oldText: string, newText: string, oldName: string, newName: string, caps: DiffCaps = {}): DiffLines {
  const { maxLines = Infinity, maxCells = MAX_CELLS } = caps;
  const script = editScript(splitLines(oldText), splitLines(newText), Math.min(maxCells, MAX_CELLS));
  const cells = script.cells;
  const lines: string[] = [];
  const cursor: Cursor = { k: 0, i: 0, j: 0 };
  for (const [from, to] of hunkRanges(script)) {
    if (lines.length === 0) lines.push(`--- ${oldName}`, `+++ ${newName}`);
    advance(script, cursor, from);
    lines.push(hunkHeader(script, cursor, to));
    for (; cursor.k < to; step(script, cursor)) {
      if (lines.length >= maxLines) return { lines, cut: true, cells };
      const op = opAt(script, cursor.k);
      lines.push(MARKS[op] + (op === ADD ? script.b[cursor.j] : script.a[cursor.i]));
    }
  }
  return { lines, cut: false, cells };
}

/** Lines without their ends; a last line without a newline is marked as diff marks it. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  else lines[lines.length - 1] += "\n\\ No newline at end of file";
  return lines;
}

function editScript(a: string[], b: string[], maxCells: number): Script {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const middle = [a.slice(head, a.length - tail), b.slice(head, b.length - tail)] as const;
  const cells = (middle[0].length + 1) * (middle[1].length + 1);
  if (middle[0].length === 0 || middle[1].length === 0 || cells > maxCells)
    return { a, b, head, tail, ops: replacedWhole(...middle), cells: 0 };
  return { a, b, head, tail, ops: middleOps(...middle), cells };
}

/** Removals before additions, as diff -u shows a replaced block. */
function replacedWhole(a: string[], b: string[]): Uint8Array {
  return new Uint8Array(a.length + b.length).fill(DEL, 0, a.length).fill(ADD, a.length);
}

function middleOps(a: string[], b: string[]): Uint8Array {
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const ops = new Uint8Array(a.length + b.length);
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ((ops[n++] = SAME), i++, j++);
    else if (i < a.length && (j === b.length || lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) ((ops[n++] = DEL), i++);
    else ((ops[n++] = ADD), j++);
  }
  return ops.subarray(0, n);
}

function opAt({ head, ops }: Script, k: number): number {
  return k < head || k >= head + ops.length ? SAME : ops[k - head]!;
}

/** The next changed position of the middle at or after `from` (an index into ops), or -1. */
function nextChange(ops: Uint8Array, from: number): number {
  for (let k = from; k < ops.length; k++) if (ops[k] !== SAME) return k;
  return -1;
}

/** The positions of each hunk: changed runs with their context, neighbours within 2×CONTEXT lines merged. */
function* hunkRanges(script: Script): Generator<[number, number]> {
  const { head, ops } = script;
  const length = head + ops.length + script.tail;
  for (let start = nextChange(ops, 0); start >= 0;) {
    let end = start;
    for (let next = nextChange(ops, end + 1); next >= 0 && next - end <= 2 * CONTEXT; next = nextChange(ops, end + 1)) end = next;
    yield [Math.max(0, head + start - CONTEXT), Math.min(length, head + end + CONTEXT + 1)];
    start = nextChange(ops, end + 1);
  }
}

function step(script: Script, cursor: Cursor): void {
  const op = opAt(script, cursor.k++);
  if (op !== ADD) cursor.i++;
  if (op !== DEL) cursor.j++;
}

/** Moves the cursor to position `to` (the common head in one jump). */
function advance(script: Script, cursor: Cursor, to: number): void {
  const jump = Math.max(0, Math.min(to, script.head) - cursor.k);
  cursor.k += jump;
  cursor.i += jump;
  cursor.j += jump;
  while (cursor.k < to) step(script, cursor);
}

/** `@@ -old +new @@` of the hunk from the cursor to position `to`. */
function hunkHeader(script: Script, cursor: Cursor, to: number): string {
  let added = 0;
  let deleted = 0;
  for (let k = cursor.k; k < to; k++) {
    const op = opAt(script, k);
    if (op === ADD) added++;
    else if (op === DEL) deleted++;
  }
  const oldCount = to - cursor.k - added;
  const newCount = to - cursor.k - deleted;
  const range = (line: number, n: number) => `${n === 0 ? line - 1 : line}${n === 1 ? "" : `,${n}`}`;
  return `@@ -${range(cursor.i + 1, oldCount)} +${range(cursor.j + 1, newCount)} @@`;
}
