/**
 * File names as the kernel gives them (bytes) against project paths (UTF-8 only): a name that is
 * not valid UTF-8 can never be synced, and must be shown escaped (`caf\xe9.txt`), never decoded
 * into something that names another file.
 */

import path from "node:path";
import type { Reporter } from "../report/reporter.js";

export type NameCheck = { valid: true; name: string } | { valid: false; escaped: string };

const decoder = new TextDecoder("utf-8", { fatal: true });

export function utf8Name(bytes: Buffer): NameCheck {
  try {
    return { valid: true, name: decoder.decode(bytes) };
  } catch {
    return { valid: false, escaped: escapeInvalidUtf8(bytes) };
  }
}

/** Why such a file is not synced, in the summary's words. */
export const NOT_UTF8 = "the name is not valid UTF-8";

/**
 * Says that a file whose name is not valid UTF-8 is not synced: once for the whole run, whoever
 * walks past it first (a scan, `push`, the file watcher). `escapedRel`: root-relative, escaped,
 * with a trailing `/` for a directory. Returns the key it is said under (`Reporter.warnOnce`),
 * its escaped path.
 */
export function warnNotUtf8(report: Reporter | undefined, root: string, escapedRel: string): string {
  const key = path.join(root, escapedRel);
  report?.warnOnce(key, "unsyncable", `not synced ${escapedRel}: ${NOT_UTF8}, and project paths must be`, { path: escapedRel });
  return key;
}

/** The valid UTF-8 runs as text, every other byte as `\xNN`. */
export function escapeInvalidUtf8(bytes: Buffer): string {
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const length = sequenceLength(bytes, i);
    if (length === 0) {
      out += `\\x${bytes[i]!.toString(16).padStart(2, "0")}`;
      i++;
    } else {
      out += bytes.toString("utf8", i, i + length);
      i += length;
    }
  }
  return out;
}

/** The length of the valid UTF-8 sequence at `i`, or 0. */
function sequenceLength(bytes: Buffer, i: number): number {
  const lead = bytes[i]!;
  const length =
    lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length <= 1 || i + length > bytes.length) return length === 1 ? 1 : 0;
  try {
    decoder.decode(bytes.subarray(i, i + length));
    return length;
  } catch {
    return 0;
  }
}
