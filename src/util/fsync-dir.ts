import { promises as fsp } from "node:fs";

/** Makes the renames, creations and unlinks in a directory durable, where the platform can (not every one fsyncs a directory; a rename is atomic all the same). */
export async function fsyncDirQuietly(dir: string): Promise<void> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(dir, "r");
    await handle.sync();
  } catch {
    // best effort, see above
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
