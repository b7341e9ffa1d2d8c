import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { passthrough } from "../../src/stream/passthrough.js";

const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });

/** Resolves once the input has nothing left to give this turn (its 'data' events have run). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

function gate() {
  let open = () => {};
  let fail = (_error: Error) => {};
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

/** A passthrough whose sink returns `wait` for the first chunk, after that chunk ("one") was read. */
async function heldAfterFirstChunk(wait: Promise<void>) {
  const input = new PassThrough();
  const seen: string[] = [];
  const stream = passthrough({ input, output: sink(), onChunk: (chunk) => (seen.push(chunk.toString()) === 1 ? wait : undefined) });
  input.write("one");
  await settled();
  return { input, seen, stream };
}

describe("passthrough", () => {
  it("should read no more while the promise a chunk's sink returned is pending, and read on once it settles", async () => {
    const wait = gate();
    const { input, seen, stream } = await heldAfterFirstChunk(wait.promise);
    input.write("two");
    input.end("three");
    await settled();
    expect(seen).toEqual(["one"]);
    wait.open();
    await stream.done;
    expect(seen).toEqual(["one", "two", "three"]);
  });

  it("should read on after a promise that failed, as after one that was kept", async () => {
    const wait = gate();
    const { input, seen, stream } = await heldAfterFirstChunk(wait.promise);
    input.end("two");
    await settled();
    expect(seen).toEqual(["one"]);
    wait.fail(new Error("the spool broke"));
    await stream.done;
    expect(seen).toEqual(["one", "two"]);
  });

  it("should read on only when every hold has settled", async () => {
    const input = new PassThrough();
    const [first, second] = [gate(), gate()];
    const seen: string[] = [];
    const stream = passthrough({ input, output: sink(), onChunk: (chunk) => void seen.push(chunk.toString()) });
    stream.holdUntil(first.promise);
    stream.holdUntil(second.promise);
    input.end("one");
    first.open();
    await settled();
    expect(seen).toEqual([]);
    second.open();
    await stream.done;
    expect(seen).toEqual(["one"]);
  });
});
