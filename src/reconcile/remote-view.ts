import { chainHash } from "../api/chain.js";
import type { ApiVersion, Change, ConflictEntry, Listing } from "../api/types.js";
import { ancestorsOf } from "../api/validate.js";
import type { Reporter } from "../report/reporter.js";
import { contradiction } from "../transfer/api-error.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import type { RemoteEntry } from "./plan.js";
import type { BaseKeeper } from "./base-keeper.js";
import { headIsMirror, type MirrorPoint, type RemotePicture } from "./mirror.js";
import { errorText } from "../errors/text.js";

/**
 * The session's picture of the remote project: a listing, then kept up to date by our own
 * acknowledged commits, the current hashes a 409 names, and the commit feed (v1.2) or a new
 * listing (older servers). It is only ever a hint: commits carry their expectation, so a stale
 * picture costs a 409, never an overwrite. What the server says is checked: a version that goes
 * back, or a feed or listing that contradicts a commit it acknowledged, is an error, not a retry.
 */

const FEED_PAGE = 1000;

export class RemoteView {
  readonly files = new Map<string, RemoteEntry>();
  /** The version the whole picture is known to be at (paths may be known newer: see `ours`). */
  version = 0;
  /** The server's chain hash at `version` (API v1.3), when it told it. */
  chain: string | undefined;
  api: ApiVersion = "1";
  /** Counts the listings and feeds taken in: a round knows whether its picture is newer than its local look. */
  generation = 0;
  private loading: Promise<void> | undefined;
  private loaded = false;
  /** Listed paths that are never written or decided: the same path twice, a file that is also a directory. */
  readonly refused = new Map<string, string>();
  /** Each directory of the remote files, with one file under it (built when a clash is looked for). */
  private dirIndex: Map<string, string> | undefined;
  /** Our acknowledged commits not yet seen in a feed or listing: what the server must show for them. */
  private readonly ours = new Map<number, Change[]>();
  /** Paths known newer than `version` (a 409's, our commit past a gap): `files` is no listing until the next one. */
  private ahead = false;
  /** A picture to start from instead of the first listing, when the head is still its point (mirror.ts). */
  private start: (() => { point: MirrorPoint; files: ReadonlyMap<string, RemoteEntry> } | undefined) | undefined;

  constructor(
    private readonly remote: ProjectRemote,
    private readonly report: Reporter,
  ) {}

  get isLoaded(): boolean {
    return this.loaded;
  }

  get(path: string): RemoteEntry | null {
    return this.files.get(path) ?? null;
  }

  /**
   * The remote file a file at `path` would clash with (a file and a directory under one name):
   * a file at one of its ancestors, or a file under it. Undefined when none.
   */
  clash(path: string): string | undefined {
    const above = ancestorsOf(path).find((dir) => this.files.has(dir));
    if (above !== undefined) return above;
    if (!this.dirIndex) {
      this.dirIndex = new Map();
      for (const file of this.files.keys()) for (const dir of ancestorsOf(file)) if (!this.dirIndex.has(dir)) this.dirIndex.set(dir, file);
    }
    return this.dirIndex.get(path);
  }

  /** The picture as a listing at `version`, when it is one (`exact`). */
  picture(): RemotePicture {
    return { version: this.version, chain: this.chain, exact: this.loaded && !this.ahead && this.ours.size === 0, files: this.files };
  }

  /**
   * The base's mirror point (BaseKeeper.loadedMirror) is where the first listing may come from:
   * the view takes it when the server's head is that point, and each save compares the base with
   * the view's picture.
   */
  pairWith(base: BaseKeeper): void {
    this.start = () => base.loadedMirror();
    base.pictureFrom(() => this.picture());
  }

  /** The first listing, once. */
  ensure(signal: AbortSignal): Promise<void> {
    if (this.loaded) return Promise.resolve();
    this.loading ??= this.firstListing(signal).then(
      () => undefined,
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  /**
   * The mirror point's files when the server's head is still that point (one small feed request
   * says so), else the server's listing. Any failure of the small request falls back to the
   * listing: a rewound server is then refused by the lineage check, as without a mirror point.
   */
  private async firstListing(signal: AbortSignal): Promise<void> {
    const start = this.start?.();
    if (start) {
      const head = await this.remote.feed(start.point.version, { limit: 1 }, signal).catch((error: unknown) => {
        signal.throwIfAborted();
        this.report.debug("remote", `the mirror point v${start.point.version} could not be checked (${errorText(error)}): listing`);
        return undefined;
      });
      // Checked again now: the base may have moved while the request was out.
      const still = this.start?.();
      if (
        head &&
        still &&
        still.point === start.point &&
        headIsMirror(start.point, { version: head.version, chain: head.chain, commits: head.commits.length })
      ) {
        return this.takeMirror(start.point, start.files);
      }
    }
    this.replace(await this.remote.list(signal));
  }

  /** The first picture is the mirror point's files: filled in place, as a listing of them would be (no array of 50,000 made for it). */
  private takeMirror(point: MirrorPoint, files: ReadonlyMap<string, RemoteEntry>): void {
    for (const [path, entry] of files) {
      this.files.set(path, { sha256: entry.sha256, size: entry.size });
      this.remote.transfer.known.add(entry.sha256);
    }
    for (const [path, why] of listingRefusals([...files.keys()])) this.refused.set(path, why);
    this.version = point.version;
    this.chain = point.chain;
    this.api = "1.2";
    this.generation++;
    this.report.debug("remote", `project is at v${point.version} with ${files.size} files (API 1.2), as this tree last synced it`, {
      version: point.version,
      files: files.size,
      api: this.api,
    });
    this.loaded = true;
  }

  /**
   * Brings the picture up to the head: the commits since our version (v1.2), or a new listing.
   * `waitMs` (v1.2): wait that long for a first new commit. Returns the paths whose content changed.
   */
  async refresh(signal: AbortSignal, waitMs?: number): Promise<Set<string>> {
    if (!this.loaded) {
      await this.ensure(signal);
      return new Set(this.files.keys());
    }
    if (this.api !== "1.2") return this.replace(await this.remote.list(signal));
    const changed = new Set<string>();
    for (let wait = waitMs; ; wait = undefined) {
      const feed = await this.remote.feed(this.version, { limit: FEED_PAGE, waitMs: wait }, signal);
      this.generation++;
      for (const commit of feed.commits) {
        this.checkOurs(commit.version, commit.changes);
        for (const change of commit.changes) if (this.apply(change)) changed.add(change.path);
        this.follow(commit.version, commit.changes, commit.chain);
      }
      if (feed.commits.length === 0 || this.version >= feed.version) return changed;
    }
  }

  /** Our commit was applied at `version` (with this chain hash, v1.3): its changes are the truth for those paths now. */
  committed(version: number, changes: readonly Change[], chain?: string): void {
    this.dirIndex = undefined;
    for (const change of changes) this.apply(change);
    if (version === this.version + 1) this.follow(version, changes, chain);
    else {
      this.ours.set(version, [...changes]);
      this.ahead = true;
    }
  }

  /**
   * The picture is at `version` now. The chain hash of the next version must be the one of its
   * changes after ours, and that of our version again (a feed under way while our commit was
   * answered) the one we know, when both are known.
   */
  private follow(version: number, changes: readonly Change[], chain: string | undefined): void {
    const due =
      version === this.version + 1 && this.chain !== undefined
        ? chainHash(this.chain, changes)
        : version === this.version
          ? this.chain
          : undefined;
    if (chain !== undefined && due !== undefined && due !== chain) {
      throw contradiction(`the chain hash of v${version} is not the one of its changes after v${version - 1}`);
    }
    this.version = version;
    this.chain = chain;
  }

  /** A 409 named the current state of these paths (as of `version`). */
  conflicted(entries: readonly ConflictEntry[]): void {
    this.dirIndex = undefined;
    this.ahead = true;
    for (const entry of entries) {
      if (entry.sha256 === null) this.files.delete(entry.path);
      else this.files.set(entry.path, { sha256: entry.sha256, size: entry.size ?? 0 });
    }
  }

  private replace(listing: Listing): Set<string> {
    if (this.loaded && listing.version < this.version)
      throw contradiction(`the project's version went back from v${this.version} to v${listing.version}`);
    const changed = new Set<string>();
    const next = new Map(listing.files.map((f) => [f.path, { sha256: f.sha256, size: f.size }]));
    for (const [path, entry] of next) if (this.files.get(path)?.sha256 !== entry.sha256) changed.add(path);
    for (const path of this.files.keys()) if (!next.has(path)) changed.add(path);
    this.checkListing(listing.version, next);
    this.refused.clear();
    for (const [path, why] of listingRefusals(listing.files.map((f) => f.path))) this.refused.set(path, why);
    this.files.clear();
    this.dirIndex = undefined;
    this.ahead = false;
    for (const [path, entry] of next) this.files.set(path, entry);
    this.version = listing.version;
    this.chain = listing.chain;
    this.api = listing.api ?? "1";
    this.generation++;
    if (!this.loaded)
      this.report.debug("remote", `project is at v${listing.version} with ${listing.files.length} files (API ${this.api})`, {
        version: listing.version,
        files: listing.files.length,
        api: this.api,
      });
    this.loaded = true;
    return changed;
  }

  /** True when the path's content changed. */
  private apply(change: Change): boolean {
    this.dirIndex = undefined;
    const before = this.files.get(change.path)?.sha256 ?? null;
    if (change.op === "delete") this.files.delete(change.path);
    else this.files.set(change.path, { sha256: change.sha256, size: change.size });
    return before !== (change.op === "delete" ? null : change.sha256);
  }

  /** A feed's commit at a version we were answered must be ours, change for change. */
  private checkOurs(version: number, changes: readonly Change[]): void {
    const sent = this.ours.get(version);
    if (!sent) return;
    this.ours.delete(version);
    if (!sameChanges(sent, changes))
      throw contradiction(`the commit feed's v${version} is not the commit the server acknowledged as v${version}`);
  }

  /** A listing at the version of our last acknowledged commit must show it. */
  private checkListing(version: number, files: ReadonlyMap<string, RemoteEntry>): void {
    const sent = this.ours.get(version);
    for (const v of [...this.ours.keys()]) if (v <= version) this.ours.delete(v);
    if (!sent) return;
    for (const change of sent) {
      const shown = files.get(change.path)?.sha256 ?? null;
      if (shown !== (change.op === "delete" ? null : change.sha256))
        throw contradiction(`the listing at v${version} contradicts the commit the server acknowledged as v${version} (${change.path})`);
    }
  }
}

/** Per-path refusals of a listing: the same path twice, a file that is also a directory. */
export function listingRefusals(paths: readonly string[]): Map<string, string> {
  const refused = new Map<string, string>();
  const count = new Map<string, number>();
  for (const path of paths) count.set(path, (count.get(path) ?? 0) + 1);
  for (const [path, n] of count) if (n > 1) refused.set(path, `listed ${n} times`);
  for (const path of count.keys()) {
    for (let slash = path.indexOf("/"); slash > 0; slash = path.indexOf("/", slash + 1)) {
      const dir = path.slice(0, slash);
      if (!count.has(dir)) continue;
      const why = `${dir} is listed as a file and as a directory (a file and a directory under one name, which a server older than API 1.3 let in): neither is synced until one of them goes from the remote`;
      refused.set(path, why);
      refused.set(dir, why);
    }
  }
  return refused;
}

function sameChanges(a: readonly Change[], b: readonly Change[]): boolean {
  const key = (c: Change) => `${c.op}\0${c.path}\0${c.op === "put" ? c.sha256 : ""}`;
  return a.length === b.length && a.every((c, i) => key(c) === key(b[i]!));
}
