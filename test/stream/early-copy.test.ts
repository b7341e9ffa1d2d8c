import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { EarlyCopy, HELD_LIMIT, passthroughOf, startEarlyCopy } from "../../src/stream/early-copy.js";

/** An output that keeps what it is given, or fails every write with `error`. */
function output(error?: NodeJS.ErrnoException) {
  const written: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (error) return done(error);
      written.push(chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(written).toString() };
}

/** Resolves once the input has nothing left to give this turn (its 'data' events have run). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("EarlyCopy", () => {
  it("should copy to the output before anyone adopts it, and hand over what it copied first", async () => {
    const input = new PassThrough();
    const out = output();
    const copy = new EarlyCopy(input, out.stream);
    input.write("one\n");
    input.write("two\n");
    await settled();
    expect(out.text()).toBe("one\ntwo\n");
    const seen: string[] = [];
    const stream = copy.adopt((chunk) => void seen.push(chunk.toString()));
    expect(seen).toEqual(["one\n", "two\n"]);
    input.end("three\n");
    await stream.done;
    expect(seen).toEqual(["one\n", "two\n", "three\n"]);
    expect(out.text()).toBe("one\ntwo\nthree\n");
  });

  it("should hand over an input that ended before it was adopted", async () => {
    const input = new PassThrough();
    const out = output();
    const copy = new EarlyCopy(input, out.stream);
    input.end("all of it\n");
    await copy.stream.done;
    const seen: string[] = [];
    await copy.adopt((chunk) => void seen.push(chunk.toString())).ended;
    expect(seen).toEqual(["all of it\n"]);
  });

  it("should tell the adopter of an output that failed before, first: it failed before those bytes were seen", async () => {
    const input = new PassThrough();
    const copy = new EarlyCopy(input, output(Object.assign(new Error("no space"), { code: "ENOSPC" })).stream);
    input.write("lost\n");
    await settled();
    const told: string[] = [];
    copy.adopt(
      (chunk) => void told.push(`seen ${chunk.toString()}`),
      (error) => told.push(`error ${error.code}`),
    );
    // Detection still gets the bytes that could not be written.
    expect(told).toEqual(["error ENOSPC", "seen lost\n"]);
  });

  it(`should stop reading while ${HELD_LIMIT / 1024 / 1024} MiB wait to be adopted, and read on once adopted`, async () => {
    const input = new PassThrough({ highWaterMark: 64 * 1024 });
    const out = output();
    const copy = new EarlyCopy(input, out.stream);
    const piece = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < HELD_LIMIT / piece.length + 4; i++) input.write(piece);
    await settled();
    expect(input.isPaused()).toBe(true);
    let bytes = 0;
    const stream = copy.adopt((chunk) => void (bytes += chunk.length));
    input.end();
    await stream.done;
    expect(bytes).toBe(piece.length * (HELD_LIMIT / piece.length + 4));
  });

  it("should reject a failed read only to whoever adopts it", async () => {
    const input = new PassThrough();
    const copy = new EarlyCopy(input, output().stream);
    input.destroy(new Error("EIO"));
    await settled();
    await expect(copy.adopt(() => {}).done).rejects.toThrow("EIO");
  });
});

describe("passthroughOf", () => {
  it("should adopt the early copy of its input once, and start a passthrough of its own otherwise", async () => {
    const input = new PassThrough();
    const out = output();
    startEarlyCopy(input, out.stream);
    input.write("early\n");
    await settled();
    const seen: string[] = [];
    const adopted = passthroughOf({ input, output: out.stream, onChunk: (chunk) => void seen.push(chunk.toString()) });
    expect(seen).toEqual(["early\n"]);
    // Taken once: another passthrough of the same input is a new one, with nothing held for it.
    const other: string[] = [];
    const fresh = passthroughOf({
      input: new PassThrough(),
      output: output().stream,
      onChunk: (chunk) => void other.push(chunk.toString()),
    });
    expect(fresh).not.toBe(adopted);
    input.end("late\n");
    await adopted.done;
    expect(seen).toEqual(["early\n", "late\n"]);
    expect(out.text()).toBe("early\nlate\n");
    expect(other).toEqual([]);
  });
});
