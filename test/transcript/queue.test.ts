import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteQueue } from "../../src/transcript/queue.js";
import { resumeAt } from "../../src/transcript/resume.js";

describe("ByteQueue", () => {
  it("should give back any range of what was pushed, across blocks and held chunks, after drops", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }), fc.nat(), fc.nat(), fc.nat({ max: 100 }), (chunks, dropAt, readAt, max) => {
        // Chunks of 24 bytes or more are held as they are, smaller ones copied into 16-byte blocks.
        const queue = new ByteQueue(5, 16, 24);
        for (const chunk of chunks) queue.push(chunk);
        const all = Buffer.concat(chunks);
        expect(queue.end).toBe(5 + all.length);
        const drop = 5 + (all.length === 0 ? 0 : dropAt % (all.length + 1));
        queue.dropTo(drop);
        expect(queue.start).toBe(drop);
        const from = drop + (queue.size === 0 ? 0 : readAt % (queue.size + 1));
        expect(queue.read(from, max).equals(all.subarray(from - 5, from - 5 + max))).toBe(true);
      }),
    );
  });

  it("should keep its own copy of a small chunk", () => {
    const queue = new ByteQueue();
    const chunk = Buffer.from("abc");
    queue.push(chunk);
    chunk.fill(0);
    expect(queue.read(0, 10).toString()).toBe("abc");
  });

  it("should hold a large chunk as it is, without a copy (fresh blocks cost page faults)", () => {
    const queue = new ByteQueue(0, 1024, 64);
    const chunk = Buffer.alloc(100, "x");
    queue.push(chunk);
    queue.push(Buffer.from("yz"));
    const [held, copied] = queue.pieces(0, 1000);
    expect(held!.buffer).toBe(chunk.buffer);
    expect(copied!.buffer).not.toBe(chunk.buffer);
    expect(queue.read(98, 10).toString()).toBe("xxyz");
  });

  it("should copy small chunks after a held one into a block of their own, not into the held chunk", () => {
    const queue = new ByteQueue(0, 8, 4);
    queue.push(Buffer.from("ab"));
    queue.push(Buffer.from("HELD"));
    queue.push(Buffer.from("cd"));
    expect(queue.pieces(0, 100).map(String)).toEqual(["ab", "HELD", "cd"]);
    queue.dropTo(3);
    expect(queue.pieces(3, 100).map(String)).toEqual(["ELD", "cd"]);
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
