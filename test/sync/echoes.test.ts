import { describe, expect, it } from "vitest";
import { AnnouncedWrites, ECHO_MS } from "../../src/sync/echoes.js";

function writesAt(start = 0) {
  let now = start;
  const writes = new AnnouncedWrites(() => now);
  return { writes, advance: (ms: number) => (now += ms) };
}

describe("AnnouncedWrites", () => {
  it("takes the file watcher's first sighting soon after an announced write for its echo", () => {
    const { writes, advance } = writesAt();
    writes.announce("a.ts");
    advance(30);
    expect(writes.isEcho("a.ts")).toBe(true);
  });

  it("has one echo per announced write: the next sighting is a change", () => {
    const { writes, advance } = writesAt();
    writes.announce("a.ts");
    advance(10);
    expect(writes.isEcho("a.ts")).toBe(true);
    advance(10);
    expect(writes.isEcho("a.ts")).toBe(false);
  });

  it(`takes a sighting later than ${ECHO_MS} ms for a change`, () => {
    const { writes, advance } = writesAt();
    writes.announce("a.ts");
    advance(ECHO_MS + 1);
    expect(writes.isEcho("a.ts")).toBe(false);
  });

  it("takes a sighting of a path no event announced for a change", () => {
    const { writes } = writesAt();
    writes.announce("a.ts");
    expect(writes.isEcho("b.ts")).toBe(false);
  });

  it("forgets the writes of a batch on its way", () => {
    const { writes } = writesAt();
    writes.announce("a.ts");
    writes.announce("b.ts");
    writes.forget(["a.ts"]);
    expect(writes.isEcho("a.ts")).toBe(false);
    expect(writes.isEcho("b.ts")).toBe(true);
  });
});
