/** What the mirror point compares of a base entry (base.ts): its content and size. */
interface BaseEntry {
  readonly sha256: string;
  readonly size: number;
}

/**
 * The mirror point (docs/local-state.md): a version, with the server's chain hash at it, at which
 * the remote project held exactly the base's files (each path, hash and size; no other path).
 * With it, a command whose server still has that head (one small `GET /commits?since=N&limit=1`
 * says so) takes the base as the remote listing instead of asking for 50,000 entries. The chain
 * hash names the whole history up to the version, so the same head is the same listing; a server
 * without chain hashes (API 1.2) never gets one. Pure decisions here; the view (remote-view.ts)
 * and the keeper (base-keeper.ts) act on them.
 */
export interface MirrorPoint {
  version: number;
  chain: string;
}

/** What a view knows of the remote: `exact` when `files` is the listing at `version`, nothing newer mixed in. */
export interface RemotePicture {
  version: number;
  chain?: string;
  exact: boolean;
  files: ReadonlyMap<string, { sha256: string; size: number }>;
}

/** The mirror point `files` has with the remote as the view pictures it; undefined when it has none. */
export function mirrorOf(files: ReadonlyMap<string, BaseEntry>, picture: RemotePicture): MirrorPoint | undefined {
  if (!picture.exact || picture.chain === undefined || !sameFiles(files, picture.files)) return undefined;
  return { version: picture.version, chain: picture.chain };
}

/** The same paths with the same hash and size (a size unknown, -1, is never the same). */
export function sameFiles(
  a: ReadonlyMap<string, { sha256: string; size: number }>,
  b: ReadonlyMap<string, { sha256: string; size: number }>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [path, entry] of a) {
    const other = b.get(path);
    if (other === undefined || other.sha256 !== entry.sha256 || other.size !== entry.size || entry.size < 0) return false;
  }
  return true;
}

/**
 * A save's merged files keep a mirror point only when they are, path for path, the files a point
 * was made with (the saver's, or the stored file's): another process's entries merged in, or a
 * moved base, make it untrue, and it is dropped.
 */
export function mergedMirror(
  merged: ReadonlyMap<string, BaseEntry>,
  candidates: readonly { mirror?: MirrorPoint; files: ReadonlyMap<string, BaseEntry> }[],
): MirrorPoint | undefined {
  for (const { mirror, files } of candidates) {
    if (mirror !== undefined && (files === merged || sameFiles(files, merged))) return mirror;
  }
  return undefined;
}

/** Whether the server's head is the mirror point: then the base is its listing. */
export function headIsMirror(point: MirrorPoint, head: { version: number; chain?: string; commits: number }): boolean {
  return head.commits === 0 && head.version === point.version && head.chain === point.chain;
}

export function sameMirror(a: MirrorPoint | undefined, b: MirrorPoint | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.version === b.version && a.chain === b.chain);
}
