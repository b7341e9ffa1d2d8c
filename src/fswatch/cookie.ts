import type { FSWatcher } from "node:fs";
import { createStateFile, ensureDir, removeDirIfUnused, removeStateFile, stateDirExists } from "../state/state-dir.js";

/** `fs.watch` of one directory, with names as the kernel gives them (bytes). */
export type WatchDirectory = (dir: string, listener: (event: string, filename: Buffer | string | null) => void) => FSWatcher;

/**
 * The settle barrier, Watchman's way: write a cookie file under `.uspark/` and wait until the
 * watcher reports it. inotify delivers the events of one process in order, through one queue:
 * once the cookie's event is read, every event from before it has been read too. `.uspark/` is
 * watched for cookies only; nothing in it is ever synced.
 */
export class CookieBarrier {
  private watcher: FSWatcher | undefined;
  private readonly waiting = new Map<string, () => void>();
  private count = 0;

  constructor(
    private readonly root: string,
    private readonly watchDirectory: WatchDirectory,
  ) {}

  /** True once the cookie came back; false when it could not be written or watched, or after `maxMs`. */
  async pass(maxMs: number): Promise<boolean> {
    const name = `cookie-${process.pid}-${++this.count}`;
    let timer: NodeJS.Timeout | undefined;
    const back = new Promise<boolean>((resolve) => {
      this.waiting.set(name, () => resolve(true));
      timer = setTimeout(() => resolve(false), maxMs);
    });
    // A tree without .uspark/ (a dry run, say) is left without one.
    const made = !stateDirExists(this.root);
    try {
      await this.watch();
      await createStateFile(this.root, name);
      return await back;
    } catch {
      return false; // a refused .uspark (a symlink) or a read-only tree: the caller waits the old way
    } finally {
      clearTimeout(timer);
      this.waiting.delete(name);
      await removeStateFile(this.root, name).catch(() => undefined);
      if (made) await this.unmake();
    }
  }

  /** Removes the `.uspark/` this barrier made, unless something else was put in it meanwhile. */
  private async unmake(): Promise<void> {
    this.close();
    await removeDirIfUnused(this.root).catch(() => undefined);
  }

  /** Watches `.uspark/` now when it is there already, so that the first barrier costs no set-up. */
  async arm(): Promise<void> {
    if (stateDirExists(this.root)) await this.watch().catch(() => undefined);
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  private async watch(): Promise<void> {
    if (this.watcher) return;
    const dir = await ensureDir(this.root);
    const watcher = this.watchDirectory(dir, (_event, filename) => {
      const name = filename === null ? undefined : filename.toString();
      if (name !== undefined) this.waiting.get(name)?.();
    });
    watcher.on("error", () => this.close());
    this.watcher = watcher;
  }
}
