// Times as a code host shows them: "3 minutes ago", the exact time on hover (a <time title=…>).

import { html, type Html } from "./html.js";
import { formatTime } from "./layout.js";

const UNITS: readonly (readonly [string, number])[] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

/** How long before `now` (ms since the epoch) an ISO time was, in the largest whole unit: "just now" under a minute. */
export function relativeTime(iso: string, now: number): string {
  const seconds = Math.floor((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 0) return "in the future";
  for (const [unit, size] of UNITS) {
    const count = Math.floor(seconds / size);
    if (count >= 1) return `${count} ${unit}${count === 1 ? "" : "s"} ago`;
  }
  return "just now";
}

/** A time as a <time> element: relative, the exact UTC time on hover; nothing for no time. */
export function timeTag(iso: string | undefined, now = Date.now()): Html | "" {
  if (!iso) return "";
  return html`<time datetime="${iso}" title="${formatTime(iso)}">${relativeTime(iso, now)}</time>`;
}
