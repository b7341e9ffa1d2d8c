// The web view's project index: directories listed one at a time with sizes and last change,
// brought up to date by each commit (a kept listing is not served after one).

import { describe, expect, it } from "vitest";
import type { CommitRecord } from "../../../src/api/types.js";
import { ProjectIndex } from "../../../src/server/web/project-index.js";

function commit(version: number, changes: CommitRecord["changes"], sessionId?: string): CommitRecord {
  return { version, time: `2026-01-0${version}T00:00:00.000Z`, changes, source: sessionId ? { agent: "claude", sessionId } : undefined };
}

const put = (path: string, size: number) => ({ op: "put" as const, path, sha256: "a".repeat(64), size });

describe("ProjectIndex", () => {
  it("lists a directory's subdirectories (files, size, newest change under them) before its files", () => {
    const index = new ProjectIndex();
    index.apply(commit(1, [put("src/a.ts", 10), put("src/lib/b.ts", 5), put("README.md", 3)], "s-1"));
    index.apply(commit(2, [put("src/lib/c.ts", 7)]));
    expect(index.list("")).toEqual([
      { kind: "dir", name: "src", path: "src", files: 3, size: 22, version: 2, time: "2026-01-02T00:00:00.000Z" },
      { kind: "file", name: "README.md", path: "README.md", size: 3, version: 1, time: "2026-01-01T00:00:00.000Z" },
    ]);
    expect(index.list("src")!.map((e) => e.name)).toEqual(["lib", "a.ts"]);
    expect(index.list("nope")).toBeUndefined();
    // Its paths too: a session page links each file the agent changed to the commit that carried it.
    expect(index.commitsBySession.get("s-1")).toEqual([
      {
        version: 1,
        time: "2026-01-01T00:00:00.000Z",
        agent: "claude",
        host: undefined,
        changes: 3,
        paths: ["src/a.ts", "src/lib/b.ts", "README.md"],
      },
    ]);
  });

  it("sees each commit in a directory listed before it: an added, a changed and a deleted file", () => {
    const index = new ProjectIndex();
    index.apply(commit(1, [put("a/x", 1), put("a/y", 1)]));
    expect(index.list("a")!.map((e) => e.name)).toEqual(["x", "y"]);
    index.apply(commit(2, [{ op: "delete", path: "a/x" }, put("a/z", 4), put("a/y", 9)]));
    expect(index.list("a")!.map((e) => [e.name, e.size, e.version])).toEqual([
      ["y", 9, 2],
      ["z", 4, 2],
    ]);
    expect(index.version).toBe(2);
  });

  it("does not take a sibling with a longer name for a directory's content (a/ is not ab/)", () => {
    const index = new ProjectIndex();
    index.apply(commit(1, [put("a/x", 1), put("ab/y", 1), put("a.txt", 1)]));
    expect(index.list("a")!.map((e) => e.path)).toEqual(["a/x"]);
  });
});
