import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
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

describe("passthrough with a write that takes bytes at once (stdout's descriptor)", () => {
  /**
   * An output as a pipe is: `writeNow` takes what `room` says (then throws EAGAIN, as a full
   * pipe does), and `stream` holds its writes until `flush()` (from then on it delivers at once).
   * `delivered` is what reached the reader, in the order it did.
   */
  function scriptedOutput(room: number[]) {
    let delivered = "";
    let flowing = false;
    const held: Array<() => void> = [];
    const stream = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        const deliver = () => {
          delivered += chunk.toString();
          done();
        };
        if (flowing) deliver();
        else held.push(deliver);
      },
    });
    const writeNow = (bytes: Buffer, from: number) => {
      const take = Math.min(room.shift() ?? Infinity, bytes.length - from);
      if (take === 0) throw Object.assign(new Error("write EAGAIN"), { code: "EAGAIN" });
      delivered += bytes.toString("latin1", from, from + take);
      return take;
    };
    const flush = () => {
      flowing = true;
      for (const deliver of held.splice(0)) deliver();
    };
    return { stream, writeNow, flush, delivered: () => delivered };
  }

  it("should send every chunk after one that did not fit through the stream until the stream has written it", async () => {
    const out = scriptedOutput([4, 2, 0]); // "aaaa" fits, "bbbb" half, then the pipe is full
    const input = new PassThrough();
    const seen: string[] = [];
    const stream = passthrough({ input, output: out.stream, writeNow: out.writeNow, onChunk: (chunk) => void seen.push(chunk.toString()) });
    for (const chunk of ["aaaa", "bbbb", "cccc"]) input.write(chunk);
    await settled();
    expect(out.delivered()).toBe("aaaabb");
    out.flush();
    await settled();
    input.end("dddd");
    await stream.done;
    expect(out.delivered()).toBe("aaaabbbbccccdddd");
    expect(seen).toEqual(["aaaa", "bbbb", "cccc", "dddd"]);
  });

  it("should stop writing, say so once and read on when the write fails otherwise (ENOSPC)", async () => {
    const out = scriptedOutput([]);
    const errors: string[] = [];
    const seen: string[] = [];
    const writeNow = () => {
      throw Object.assign(new Error("write ENOSPC"), { code: "ENOSPC" });
    };
    const input = new PassThrough();
    const stream = passthrough({
      input,
      output: out.stream,
      writeNow,
      onChunk: (chunk) => void seen.push(chunk.toString()),
      onOutputError: (error) => errors.push(error.code!),
    });
    input.write("one");
    await settled();
    input.end("two");
    await stream.done;
    expect(errors).toEqual(["ENOSPC"]);
    expect(seen).toEqual(["one", "two"]);
    expect(out.delivered()).toBe("");
  });
});

describe("passthrough to a pipe's descriptor, as to stdout", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A FIFO to write to, as stdout on a pipe is: `fd` non-blocking (as Node leaves it), `stream` a
   * socket on it (process.stdout), and its reader, paused until `read()`.
   */
  function outputPipe() {
    const dir = mkdtempSync(path.join(tmpdir(), "uspark-passthrough-"));
    dirs.push(dir);
    const file = path.join(dir, "fifo");
    expect(spawnSync("mkfifo", [file]).status).toBe(0);
    const reader = new Socket({ fd: openSync(file, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
    reader.pause();
    const fd = openSync(file, constants.O_WRONLY | constants.O_NONBLOCK);
    const stream = new Socket({ fd, readable: false, writable: true });
    const received: Buffer[] = [];
    reader.on("data", (chunk: Buffer) => received.push(chunk));
    const read = async () => {
      reader.resume();
      await once(reader, "end");
      return Buffer.concat(received);
    };
    return { fd, stream, reader, read };
  }

  /** 1 MiB in 16 chunks, every position told apart. */
  function chunks(): Buffer[] {
    const bytes = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE(i, i);
    return Array.from({ length: 16 }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
  }

  it("should write what the pipe takes itself, the rest through the stream, all in order, while its reader lags", async () => {
    const out = outputPipe();
    const viaStream = vi.spyOn(out.stream, "write");
    const input = new PassThrough();
    const stream = passthrough({ input, output: out.stream, writeNow: (bytes, from) => writeSync(out.fd, bytes, from), onChunk: () => {} });
    const sent = chunks();
    for (const chunk of sent) input.write(chunk);
    input.end();
    await settled();
    // The pipe is full and nobody reads it: what did not fit waits in the stream.
    const streamed = () => viaStream.mock.calls.reduce((sum, [chunk]) => sum + (chunk as Buffer).length, 0);
    expect(streamed()).toBeGreaterThan(0);
    const received = out.read();
    await stream.done;
    out.stream.end();
    expect((await received).equals(Buffer.concat(sent))).toBe(true);
    expect(streamed()).toBeLessThan(1024 * 1024);
  });

  it("should stop writing, say so once and read its input to the end when the descriptor fails (EPIPE)", async () => {
    const out = outputPipe();
    out.reader.destroy();
    await once(out.reader, "close");
    const viaStream = vi.spyOn(out.stream, "write");
    const errors: string[] = [];
    let read = 0;
    const input = new PassThrough();
    const stream = passthrough({
      input,
      output: out.stream,
      writeNow: (bytes, from) => writeSync(out.fd, bytes, from),
      onChunk: (chunk) => void (read += chunk.length),
      onOutputError: (error) => errors.push(error.code!),
    });
    for (const chunk of chunks()) input.write(chunk);
    input.end();
    await stream.done;
    out.stream.destroy();
    expect(errors).toEqual(["EPIPE"]);
    expect(read).toBe(1024 * 1024);
    expect(viaStream).not.toHaveBeenCalled();
  });
});
