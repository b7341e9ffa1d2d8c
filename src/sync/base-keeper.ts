import type { Reporter } from "../report.js";
import { loadBase, saveBase, type Base } from "./base.js";

/**
 * The session's copy of the base, kept up to date by every acknowledged commit (and every
 * "the remote already has it"), and written back to state.json at most every `saveEveryMs`
 * and once at the end: a session of 1,000 commits must not rewrite a 50k-entry file 1,000 times.
 * A base that was not written yet (a crash between commits) costs nothing but a re-check: the
 * next watch finds those files differing from the older base, hashes them, and the engine sees
 * that the remote already has them. It can never hide an edit, since the base only ever
 * records content the server acknowledged.
 */

export const SAVE_EVERY_MS = 500;
/**
 * Without a base, files written this long before the process started count as new too: the
 * file system's clock is coarser than ours, and a process does not start in one instant.
 */
export const START_SLACK_MS = 1000;

/** What a scan compares the tree with. */
export interface BaseView {
  /** Remote path → sha256 this machine last synced or pulled. */
  readonly files: ReadonlyMap<string, string>;
  /** False when `files` holds only what was synced (no pull came first). */
  readonly complete: boolean;
  /** Files missing from an incomplete base are new when modified at or after this (ms). */
  readonly since: number;
}

export interface BaseKeeperOptions {
  root: string;
  apiUrl: string;
  projectId: string;
  report: Reporter;
  /** When this watch started (ms since the epoch). */
  startedAt: number;
  saveEveryMs?: number;
}

export class BaseKeeper implements BaseView {
  readonly files: Map<string, string>;
  readonly complete: boolean;
  readonly since: number;
  private version: number;
  private dirty = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private saving: Promise<void> = Promise.resolve();
  /** Writes of state.json started so far. */
  saves = 0;

  private constructor(
    private readonly options: BaseKeeperOptions,
    stored: Base | undefined,
  ) {
    this.files = new Map(stored?.files);
    this.version = stored?.version ?? 0;
    this.complete = stored !== undefined && !stored.partial;
    this.since = stored?.partial ? (stored.savedAt ?? 0) : options.startedAt - START_SLACK_MS;
  }

  /** Loads this project's base (no base, or an unusable one said once: starts empty). */
  static async load(options: BaseKeeperOptions): Promise<BaseKeeper> {
    return new BaseKeeper(options, await loadBase(options.root, options.apiUrl, options.projectId, options.report));
  }

  /**
   * The remote holds `sha256` at `path` (undefined: it holds nothing there), as of `version`.
   * What the base already says (an unchanged file) leaves state.json alone.
   */
  record(changes: readonly { path: string; sha256?: string }[], version?: number): void {
    let changed = false;
    for (const { path, sha256 } of changes) {
      if (sha256 === undefined) {
        if (this.files.delete(path)) changed = true;
      } else if (this.files.get(path) !== sha256) {
        this.files.set(path, sha256);
        changed = true;
      }
    }
    if (version !== undefined && version > this.version) {
      this.version = version;
      changed = true;
    }
    if (!changed) return;
    this.dirty = true;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.options.saveEveryMs ?? SAVE_EVERY_MS);
    this.timer.unref?.();
  }

  /** Writes what is not written yet and stops the timer. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.save();
    await this.saving;
  }

  private save(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.saves++;
    const { root, apiUrl, projectId, report } = this.options;
    const base: Base = { version: this.version, files: new Map(this.files) };
    if (!this.complete) base.partial = true;
    this.saving = this.saving
      .then(() => saveBase(root, apiUrl, projectId, base))
      .catch((error: unknown) => {
        report.warn("state-write", `could not write the base to .uspark/state.json: ${(error as Error).message}; the next watch re-checks by hash`);
      });
  }
}
