import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPathPolicy } from "../../src/paths.js";
import { createTreeScanner } from "../../src/scan/scanner.js";
import { Reporter } from "../../src/report.js";
import { sha256, tempDir } from "../sync/helpers.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-scan-"));
});
afterEach(() => cleanup());

const quiet = new Reporter({ verbosity: "quiet", stream: { write: () => true } });
function scanner(options: { prefix?: string; ignore?: string[] } = {}) {
  const policy = createPathPolicy({ root, ...options });
  return createTreeScanner({ root, policy, maxFileSize: 1 << 20, report: quiet, ...options });
}
const base = (files: Record<string, string>, complete = true) => ({ files: new Map(Object.entries(files)), complete, since: 0 });
const names = (targets: { kind: string; remote: string }[]) => targets.map((t) => `${t.kind} ${t.remote}`).sort();

describe("the tree scanner", () => {
  it("finds edits, new files and deletes against the base", async () => {
    await writeFile(path.join(root, "same.txt"), "same");
    await writeFile(path.join(root, "edited.txt"), "new");
    await writeFile(path.join(root, "added.txt"), "added");
    const result = await scanner().scan(base({ "same.txt": sha256("same"), "edited.txt": sha256("old"), "gone.txt": sha256("x") }));
    expect(names(result.targets)).toEqual(["delete gone.txt", "write added.txt", "write edited.txt"]);
    expect(result.targets.find((t) => t.remote === "gone.txt")?.abs).toBe(path.join(root, "gone.txt"));
  });

  it("hashes a file again only when its size or mtime moved", async () => {
    const file = path.join(root, "a.txt");
    await writeFile(file, "one");
    const scan = scanner();
    const known = base({ "a.txt": sha256("one") });
    expect((await scan.scan(known)).hashed).toBe(1);
    expect((await scan.scan(known)).hashed).toBe(0);
    await writeFile(file, "two");
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    const third = await scan.scan(known);
    expect(third.hashed).toBe(1);
    expect(names(third.targets)).toEqual(["write a.txt"]);
  });

  it("never takes an ignored file for a delete, and never offers it for upload", async () => {
    await writeFile(path.join(root, ".gitignore"), "secret.env\n");
    await writeFile(path.join(root, "secret.env"), "KEY=1");
    const result = await scanner().scan(base({ "secret.env": sha256("old"), ".gitignore": sha256("secret.env\n") }));
    expect(result.targets).toEqual([]);
  });

  it("maps paths under --prefix and leaves the rest of the tree alone", async () => {
    await mkdir(path.join(root, "site", "css"), { recursive: true });
    await writeFile(path.join(root, "site", "css", "a.css"), "a");
    await writeFile(path.join(root, "outside.txt"), "o");
    const result = await scanner({ prefix: "site" }).scan(base({}));
    expect(names(result.targets)).toEqual(["write css/a.css"]);
    expect(result.targets[0]!.abs).toBe(path.join(root, "site", "css", "a.css"));
  });

  it("lists in-root files the API cannot represent, with a reason a user understands", async () => {
    await writeFile(path.join(root, "a\\b.txt"), "x");
    const long = "d".repeat(200);
    await mkdir(path.join(root, long, long, long, long, long, long), { recursive: true });
    await writeFile(path.join(root, long, long, long, long, long, long, "f.txt"), "x");
    const result = await scanner().scan(base({}));
    expect(result.targets).toEqual([]);
    expect(result.unrepresentable.map((u) => u.reason).sort()).toEqual([
      "a backslash in the name cannot be stored remotely",
      "a path over 1024 bytes cannot be stored remotely",
    ]);
  });

  it("treats a directory that vanished mid-session as deletes of what the base had in it", async () => {
    await mkdir(path.join(root, "d"));
    await writeFile(path.join(root, "d", "f"), "x");
    const scan = scanner();
    const known = base({ "d/f": sha256("x") });
    expect((await scan.scan(known)).targets).toEqual([]);
    await rm(path.join(root, "d"), { recursive: true });
    expect(names((await scan.scan(known)).targets)).toEqual(["delete d/f"]);
  });
});
