/**
 * Text for a terminal. Cut to its width, as the terminal counts it: East Asian wide characters and
 * most emoji take two columns, combining marks none (an approximation of wcwidth, good enough to
 * keep one line on one row). And words to paste into its shell.
 */

const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];
const ZERO_WIDTH = /[\u0300-\u036f\u200b-\u200d\ufe00-\ufe0f]/;

export function charWidth(char: string): number {
  if (ZERO_WIDTH.test(char)) return 0;
  const code = char.codePointAt(0)!;
  return WIDE.some(([from, to]) => code >= from && code <= to) ? 2 : 1;
}

export function textWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char);
  return width;
}

/** At most `columns` columns of `text` (one line, no escapes in it), ending in "…" when cut. */
export function cutToWidth(text: string, columns: number): string {
  if (textWidth(text) <= columns) return text;
  let used = 0;
  let out = "";
  for (const char of text) {
    const width = charWidth(char);
    if (used + width > columns - 1) break;
    used += width;
    out += char;
  }
  return out + "…";
}

/**
 * A terminal's width to write for: its columns, or 80 when unknown (not a terminal, or a
 * pseudo-terminal whose size nobody set, as under script or docker exec -t: it reports 0).
 */
export function terminalColumns(columns: number | undefined): number {
  return columns || 80;
}

/** `word` as one word for a POSIX shell (a command a hint names, to paste): as it is when that is safe, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
