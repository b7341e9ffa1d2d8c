import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readLocal } from "../../src/reconcile/local-read.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("readLocal", () => {
  it("should read a file whose name ends in ' (deleted)', which the kernel also uses to mark an unlinked descriptor (defect 12)", async () => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-files-")));
    const file = path.join(dir, "notes (deleted)");
    writeFileSync(file, "still here");
    const read = await readLocal(file, { root: dir, maxFileSize: 1024 });
    expect(read).toMatchObject({ kind: "file", size: 10 });
  });
});
