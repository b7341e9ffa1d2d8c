import { WIRE_ERRORS } from "../api/errors.js";
import { EVENT_SECTIONS, REPORT_EVENTS, type EventSpec } from "../report/events.js";

/**
 * The tables of docs/ that are made from the code's own lists (`npm run docs:generate`): each
 * between a `<!-- generated: NAME -->` line and an `<!-- end generated: NAME -->` line, the prose
 * around them written by hand. A test keeps the pages equal to what this makes of them.
 */

/** A Markdown table: a header row, its rule, then a row each (a `|` in a cell escaped). */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `|${cells.map((cell) => ` ${cell.replace(/\|/g, "\\|")} `.replace(/^  $/, " ")).join("|")}|`;
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

/** The table of one section of docs/log-events.md: its events of src/report/events.ts, in their order. */
export function eventTable(section: keyof typeof EVENT_SECTIONS): string {
  const events = Object.entries(REPORT_EVENTS as Record<string, EventSpec>).filter(([, spec]) => spec.section === section);
  return markdownTable(
    ["event", "level", "fields", "when"],
    events.map(([name, spec]) => [`\`${name}\``, spec.levels.join(", "), spec.fields, spec.when]),
  );
}

function eventTables(doc: string): string {
  return Object.keys(EVENT_SECTIONS).reduce(
    (page, section) => replaceGenerated(page, `events: ${section}`, eventTable(section as keyof typeof EVENT_SECTIONS)),
    doc,
  );
}

/** The pages made here and what each becomes: docs/... path → its text made from `read(path)`. */
export const GENERATED_PAGES: Record<string, (doc: string) => string> = {
  "docs/api.md": (doc) => replaceGenerated(doc, "error codes", wireErrorTable()),
  "docs/log-events.md": eventTables,
};
