import { MAX_PATH_BYTES } from "../api/validate.js";

/**
 * Where the local version of a conflicting file goes (docs/sync.md#conflicts):
 * `<dir>/<stem>.conflict-<YYYYMMDD-HHMMSS>-<host>-<first 6 hex of its sha256><.ext>`, in UTC, `.ext`
 * the last extension (none for a dotfile such as `.env`). Time, machine and content are all in the
 * name, so a CI machine that disappears loses nothing and two copies never collide.
 */

const MARK = ".conflict-";

/** How a conflict is ended (docs/sync.md, Conflicts): said wherever one is. */
export const RESOLVE_HINT = "uspark resolve <path> --mine | --theirs | --both";

export function conflictCopyPath(path: string, at: Date, host: string, sha256: string): string {
  const { dir, stem, ext } = splitName(path);
  const tag = `${MARK}${stamp(at)}-${hostLabel(host)}-${sha256.slice(0, 6)}`;
  // A name at the length limit keeps its tag and extension: the stem gives way.
  const room = MAX_PATH_BYTES - Buffer.byteLength(dir + tag + ext);
  return dir + fitBytes(stem, Math.max(1, room)) + tag + ext;
}

/** Is `path` a conflict copy of `original` (any time, any machine)? */
export function isConflictCopyOf(path: string, original: string): boolean {
  const { dir, stem, ext } = splitName(original);
  if (!path.startsWith(dir) || path.indexOf("/", dir.length) !== -1) return false;
  const copy = path.slice(dir.length);
  return (
    copy.startsWith(stem + MARK) &&
    copy.endsWith(ext) &&
    /^\d{8}-\d{6}-.+-[0-9a-f]{6}$/.test(copy.slice(stem.length + MARK.length, copy.length - ext.length))
  );
}

/** `src/app.test.ts` → `src/`, `app.test`, `.ts`; a dotfile (`.env`) or `name.` has no extension. */
function splitName(path: string): { dir: string; stem: string; ext: string } {
  const slash = path.lastIndexOf("/");
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf(".");
  const hasExt = dot > 0 && dot < name.length - 1;
  return { dir: path.slice(0, slash + 1), stem: hasExt ? name.slice(0, dot) : name, ext: hasExt ? name.slice(dot) : "" };
}

/** `20261125-101500` (UTC). */
function stamp(at: Date): string {
  const iso = at.toISOString(); // 2026-11-25T10:15:00.000Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/** The machine's name as one safe path segment: letters, digits, `.`, `_` and `-`, at most 40 characters. */
export function hostLabel(host: string): string {
  const label = host
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(0, 40);
  return label === "" ? "host" : label;
}

function fitBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  let out = "";
  for (const char of text) {
    if (Buffer.byteLength(out + char) > bytes) break;
    out += char;
  }
  return out;
}
