import { WIRE_ERRORS } from "../api/errors.js";

/**
 * The tables of docs/ that are made from the code's own lists (`npm run docs:generate`): each
 * between a `<!-- generated: NAME -->` line and an `<!-- end generated: NAME -->` line, the prose
 * around them written by hand. A test keeps the pages equal to what this makes of them.
 */

/** A Markdown table: a header row, its rule, then a row each (a `|` in a cell escaped). */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** `doc` with what stands between the markers of `name` replaced by `content`; throws if the markers are missing. */
export function replaceGenerated(doc: string, name: string, content: string): string {
  const start = `<!-- generated: ${name} (npm run docs:generate) -->\n`;
  const end = `<!-- end generated: ${name} -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`no "${start.trim()}" ... "${end}" in the page`);
  return doc.slice(0, from + start.length) + content + "\n" + doc.slice(to);
}

/** The table of docs/api.md#error-codes: every code of src/api/errors.ts. */
export function wireErrorTable(): string {
  const rows = Object.entries(WIRE_ERRORS).map(([code, { status, meaning }]) => [`\`${code}\``, status.join(", "), meaning]);
  return markdownTable(["code", "status", "meaning"], rows);
}

/** The pages made here and what each becomes: docs/... path → its text made from `read(path)`. */
export const GENERATED_PAGES: Record<string, (doc: string) => string> = {
  "docs/api.md": (doc) => replaceGenerated(doc, "error codes", wireErrorTable()),
};
