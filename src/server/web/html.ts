// The one way the web view makes HTML (docs/web-view.md#how-it-is-kept-safe): a tagged template
// that escapes every value it is given unless that value was itself made by the template. No raw
// string reaches a page.

const MARK = Symbol("html");

/** HTML made by `html`: safe to insert as it is. */
export interface Html {
  readonly [MARK]: string;
}

/** What may be put into a template: text (escaped), HTML made by `html`, or lists of them. Nothing, false: left out. */
export type Fragment = Html | string | number | undefined | null | false | readonly Fragment[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function isHtml(value: unknown): value is Html {
  return typeof value === "object" && value !== null && MARK in value;
}

function fragmentText(value: Fragment): string {
  if (value === undefined || value === null || value === false) return "";
  if (isHtml(value)) return value[MARK];
  if (Array.isArray(value)) return value.map(fragmentText).join("");
  return escapeHtml(String(value));
}

/**
 * html`<a href="${url}">${name}</a>`: the literal parts are the page's own markup, every value is
 * escaped. Attribute values must be written between double quotes in the literal.
 */
export function html(strings: TemplateStringsArray, ...values: Fragment[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += fragmentText(values[i]!) + strings[i + 1]!;
  return { [MARK]: out };
}

/** The text of a whole page, to send. */
export function renderHtml(page: Html): string {
  return page[MARK];
}

/** A path of the web view from its segments, each percent-encoded (a name never becomes markup or another path). */
export function webPath(...segments: string[]): string {
  return "/" + segments.map(encodeURIComponent).join("/");
}

/** `path` with a query of the given (defined) parameters, after any query it has. */
export function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
  const text = query.toString();
  return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
}
