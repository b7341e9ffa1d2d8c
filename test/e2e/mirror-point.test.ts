import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { startMemoryRef, tempDir, type RefServer } from "../kit/sync.js";

/**
 * The mirror point (src/reconcile/mirror.ts, docs/local-state.md): a tree left in sync records the
 * version where the remote held exactly its base, and the next command takes the base as the
 * listing while the server's head is still there (one `GET /commits?since=N&limit=1`). A commit
 * from anywhere else moves the head: then the listing is asked for, and its change is seen.
 * Through the built CLI against the reference server.
 */

let root: string;
let cleanup: () => Promise<void>;
let server: RefServer;

const uspark = (...args: string[]) =>
  runCli([...args, "--project-id", "p", "--api-url", server.url, "--root", root], { timeoutMs: 30_000 });
const listings = () => server.requests.filter((r) => r.method === "GET" && /\/files(\?|$)/.test(r.url)).length;

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-mirror-"));
  server = await startMemoryRef();
});
afterEach(async () => {
  await server.stop();
  await cleanup();
});

describe("a tree left in sync", () => {
  it("is told in sync by status and pushed from without the project's listing, while no one else commits", async () => {
    await writeFile(path.join(root, "a.txt"), "one\n");
    await writeFile(path.join(root, "b.txt"), "bee\n");
    expect((await uspark("push")).code).toBe(0);
    const before = listings();
    const status = await uspark("status", "--short");
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout.toString()).toBe("");
    await writeFile(path.join(root, "a.txt"), "two\n");
    const push = await uspark("push");
    expect(push.code, push.stderr).toBe(0);
    expect(listings()).toBe(before);
    expect(server.requests.some((r) => r.method === "GET" && /\/commits\?since=1&limit=1$/.test(r.url))).toBe(true);
    const after = await uspark("status", "--short");
    expect(after.code, after.stderr).toBe(0);
    expect(listings()).toBe(before);
  });

  it("sees another writer's commit: the head moved, so the listing is asked for", async () => {
    await writeFile(path.join(root, "a.txt"), "one\n");
    expect((await uspark("push")).code).toBe(0);
    await commitFiles(server.url, "p", "tok", { "a.txt": "theirs\n", "c.txt": "sea\n" });
    const before = listings();
    const status = await uspark("status", "--short");
    expect(status.stdout.toString()).toBe(" M a.txt\n A c.txt\n");
    expect(status.code).toBe(1);
    expect(listings()).toBe(before + 1);
    // Pulled, the tree is in sync again at the new head: the next status needs no listing.
    expect((await uspark("pull")).code).toBe(0);
    const again = await uspark("status", "--short");
    expect(again.stdout.toString()).toBe("");
    expect(listings()).toBe(before + 2);
  });

  it("still sees a local edit (the point says what the remote holds, never what the tree holds)", async () => {
    await writeFile(path.join(root, "a.txt"), "one\n");
    expect((await uspark("push")).code).toBe(0);
    await writeFile(path.join(root, "a.txt"), "local\n");
    const status = await uspark("status", "--short");
    expect(status.stdout.toString()).toBe("M  a.txt\n");
    expect(status.code).toBe(1);
  });
});
