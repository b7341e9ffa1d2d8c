import { describe, expect, it } from "vitest";
import { changeBytes, chunkEnds, commitChunks, MAX_COMMIT_BYTES, MAX_COMMIT_CHANGES } from "../../src/reconcile/commit-chunks.js";
import { emptyPlan, type Put } from "../../src/reconcile/plan.js";

/** Where a large commit is cut (commit-chunks.ts): by changes, and by the bytes of its JSON body. */

describe("chunkEnds", () => {
  it.each([
    ["nothing", [], 3, 100, []],
    ["one change", [10], 3, 100, [1]],
    ["fits in one", [10, 10, 10], 3, 100, [3]],
    ["one change past the count", [10, 10, 10, 10], 3, 100, [3, 4]],
    ["exactly the bytes", [50, 50], 3, 100, [2]],
    ["one byte past the bytes", [50, 51], 3, 100, [1, 2]],
    ["a change alone past the bytes goes alone", [10, 500, 10], 3, 100, [1, 2, 3]],
    ["a first change past the bytes", [500, 10], 3, 100, [1, 2]],
    ["bytes cut before the count", [40, 40, 40, 40, 40, 40], 5, 100, [2, 4, 6]],
    ["count and bytes together", [10, 10, 10, 90], 3, 100, [3, 4]],
  ])("%s", (_, bytes, maxChanges, maxBytes, ends) => {
    expect(chunkEnds(bytes, maxChanges, maxBytes)).toEqual(ends);
  });
});

const put = (path: string): Put =>
  ({
    path,
    from: path,
    sha256: "a".repeat(64),
    size: 1,
    expect: null,
    local: { sha256: "a".repeat(64), size: 1, stat: { size: 1, mtimeMs: 1, ino: 1 }, readAt: 0 },
  }) as Put;

describe("commitChunks", () => {
  it("sends a first push of 20,000 short paths in 2 commits (it made 20 of 1,000)", () => {
    const planned = { ...emptyPlan(), puts: Array.from({ length: 20_000 }, (_, i) => put(`packages/p${i}/src/index.ts`)) };
    const parts = commitChunks(planned);
    expect(parts.map((p) => p.puts.length)).toEqual([MAX_COMMIT_CHANGES, MAX_COMMIT_CHANGES]);
    expect(parts.flatMap((p) => p.puts)).toEqual(planned.puts);
  });

  it("keeps each part's body within the bytes when the paths are long", () => {
    const planned = { ...emptyPlan(), puts: Array.from({ length: 5_000 }, (_, i) => put(`${"d/".repeat(500)}${i}`)) };
    const parts = commitChunks(planned);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.puts.reduce((sum, p) => sum + changeBytes(p.path), 0)).toBeLessThanOrEqual(MAX_COMMIT_BYTES);
    expect(parts.flatMap((p) => p.puts)).toEqual(planned.puts);
  });

  it("keeps puts, copies and deletes in their order across parts, and a plan that fits is itself", () => {
    const small = { ...emptyPlan(), puts: [put("a")] };
    expect(commitChunks(small)).toEqual([small]);
    const planned = {
      ...emptyPlan(),
      puts: Array.from({ length: MAX_COMMIT_CHANGES }, (_, i) => put(`f${i}`)),
      copies: [put("c")],
      deletes: [{ path: "gone", expect: "b".repeat(64) }],
    };
    const parts = commitChunks(planned);
    expect(parts).toHaveLength(2);
    expect(parts[1]).toMatchObject({ puts: [], copies: [planned.copies[0]], deletes: planned.deletes });
  });
});
