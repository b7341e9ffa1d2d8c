import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteQueue } from "../../src/transcript/queue.js";
import { resumeAt } from "../../src/transcript/resume.js";

describe("ByteQueue", () => {
  it("should give back any range of what was pushed, across blocks, after drops", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }),
        fc.nat(),
        fc.nat(),
        fc.nat({ max: 100 }),
        (chunks, dropAt, readAt, max) => {
          const queue = new ByteQueue(5, 16);
          for (const chunk of chunks) queue.push(chunk);
          const all = Buffer.concat(chunks);
          expect(queue.end).toBe(5 + all.length);
          const drop = 5 + (all.length === 0 ? 0 : dropAt % (all.length + 1));
          queue.dropTo(drop);
          expect(queue.start).toBe(drop);
          const from = drop + (queue.size === 0 ? 0 : readAt % (queue.size + 1));
          expect(queue.read(from, max).equals(all.subarray(from - 5, from - 5 + max))).toBe(true);
        },
      ),
    );
  });

  it("should keep its own copy of a chunk, small or a whole pipe read (its buffer is read into again)", () => {
    const queue = new ByteQueue();
    const small = Buffer.from("abc");
    const large = Buffer.alloc(64 * 1024, "x");
    queue.push(small);
    queue.push(large);
    small.fill(0);
    large.fill(0);
    const kept = queue.read(0, 100 * 1024);
    expect(kept.subarray(0, 3).toString()).toBe("abc");
    expect(kept.subarray(3).equals(Buffer.alloc(64 * 1024, "x"))).toBe(true);
  });

  it("should read into the caller's buffer, as much as it holds", () => {
    const queue = new ByteQueue(0, 4);
    queue.push(Buffer.from("0123456789"));
    const into = Buffer.alloc(6);
    const read = queue.read(2, 100, into);
    expect(read.toString()).toBe("234567");
    expect(read.buffer).toBe(into.buffer);
    expect(queue.read(8, 100, into).toString()).toBe("89");
  });

  it("should let go of whole blocks once they are dropped", () => {
    const queue = new ByteQueue(0, 4);
    queue.push(Buffer.from("0123456789"));
    queue.dropTo(9);
    expect(queue.pieces(9, 10).map(String)).toEqual(["9"]);
    queue.dropTo(3); // behind start: nothing happens
    expect(queue.start).toBe(9);
    expect(() => queue.read(2, 1)).toThrow(RangeError);
  });

  it("should reuse dropped blocks for new bytes, never under a buffer read handed out", () => {
    const queue = new ByteQueue(0, 4);
    queue.push(Buffer.from("abcd"));
    const read = queue.read(0, 4);
    const pieces = queue.pieces(0, 4);
    queue.dropTo(4);
    queue.push(Buffer.from("wxyz"));
    expect(read.toString()).toBe("abcd");
    expect(pieces[0]!.buffer).toBe(queue.pieces(4, 4)[0]!.buffer); // the block came back
    expect(queue.read(4, 4).toString()).toBe("wxyz");
  });
});

describe("resumeAt", () => {
  const held = { from: 100, end: 500 };
  it.each([
    ["the length after our append", 300, 300],
    ["a length we still hold bytes from (an answer that was lost)", 150, 150],
    ["all we recorded", 500, 500],
    ["the oldest byte we still hold", 100, 100],
  ])("should go on from %s", (_what, length, offset) => {
    expect(resumeAt(length, held)).toEqual({ ok: true, offset });
  });

  it("should fail when the server has more than was recorded", () => {
    expect(resumeAt(501, held)).toMatchObject({ ok: false, reason: expect.stringMatching(/more than the 500 recorded/) });
  });

  it("should fail when the server lost bytes we no longer hold", () => {
    expect(resumeAt(99, held)).toMatchObject({ ok: false, reason: expect.stringMatching(/only 99 bytes/) });
  });
});
