import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPathPolicy } from "../../src/paths.js";
import { createTreeScanner } from "../../src/scan/scanner.js";
import { Reporter } from "../../src/report.js";
import { captureReporter, sha256, tempDir } from "../sync/helpers.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-scan-"));
});
afterEach(() => cleanup());

const quiet = new Reporter({ verbosity: "quiet", stream: { write: () => true } });
function scanner(options: { prefix?: string; ignore?: string[] } = {}) {
  const policy = createPathPolicy({ root, ...options });
  return createTreeScanner({ root, policy, prefix: options.prefix, maxFileSize: 1 << 20, report: quiet });
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

  it("applies a .gitignore changed between two scans to the next one, with no file watcher to say so", async () => {
    await writeFile(path.join(root, ".gitignore"), "*.log\n");
    await mkdir(path.join(root, "sub"));
    await writeFile(path.join(root, "sub", ".gitignore"), "");
    await writeFile(path.join(root, "app.log"), "log");
    await writeFile(path.join(root, "sub", "secret.env"), "KEY=1");
    const scan = scanner();
    const remotes = async () => (await scan.scan(base({}))).targets.map((t) => t.remote).sort();
    expect(await remotes()).toEqual([".gitignore", "sub/.gitignore", "sub/secret.env"]);
    await writeFile(path.join(root, ".gitignore"), "# nothing ignored any more\n");
    await writeFile(path.join(root, "sub", ".gitignore"), "*.env\n");
    expect(await remotes()).toEqual([".gitignore", "app.log", "sub/.gitignore"]);
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

  it("lists a name that is not valid UTF-8 as not synced, under --prefix too, and no longer once it is gone", async () => {
    await mkdir(path.join(root, "site"));
    const bad = Buffer.from(path.join(root, "site", "caf\xe9.txt"), "latin1");
    await writeFile(bad, "x");
    await mkdir(Buffer.from(path.join(root, "site", "d\xfcr"), "latin1"));
    await writeFile(path.join(root, "site", "fine.txt"), "x");
    const scan = scanner({ prefix: "site" });
    const first = await scan.scan(base({}));
    expect(names(first.targets)).toEqual(["write fine.txt"]);
    expect(first.unrepresentable.map(({ remote, reason }) => `${remote}: ${reason}`).sort()).toEqual([
      "caf\\xe9.txt: the name is not valid UTF-8",
      "d\\xfcr/: the name is not valid UTF-8",
    ]);
    await rm(bad);
    await rm(Buffer.from(path.join(root, "site", "d\xfcr"), "latin1"), { recursive: true });
    expect((await scan.scan(base({}))).unrepresentable).toEqual([]);
  });

  it("warns once about such a name, however many scans walk past it", async () => {
    await writeFile(Buffer.from(path.join(root, "caf\xe9.txt"), "latin1"), "x");
    const log = captureReporter();
    const scan = createTreeScanner({ root, policy: createPathPolicy({ root }), maxFileSize: 1 << 20, report: log.reporter });
    for (let i = 0; i < 3; i++) expect((await scan.scan(base({}))).unrepresentable).toHaveLength(1);
    expect(log.records.filter((r) => r.level === "warn").map((r) => r.message)).toEqual(["not synced caf\\xe9.txt: the name is not valid UTF-8, and project paths must be"]);
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
