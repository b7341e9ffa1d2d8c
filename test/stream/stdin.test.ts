import { spawnSync } from "node:child_process";
import { constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable, type Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { EarlyCopy, HELD_LIMIT } from "../../src/stream/early-copy.js";
import { passthrough } from "../../src/stream/passthrough.js";
import { readInPlace, readsInPlace } from "../../src/stream/stdin.js";

// stdin read in place, over a real FIFO: a pipe as an agent's output is.

const MiB = 1024 * 1024;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A FIFO: `input` reads it in place; `write` feeds it `bytes` and closes it. */
function fifo(): { input: Readable; write(bytes: Buffer): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "uspark-stdin-"));
  dirs.push(dir);
  const file = path.join(dir, "fifo");
  expect(spawnSync("mkfifo", [file]).status).toBe(0);
  // Opened for reading first, without waiting for a writer; then the writer cannot block.
  const input = readInPlace(openSync(file, constants.O_RDONLY | constants.O_NONBLOCK));
  const writer = new Socket({ fd: openSync(file, constants.O_WRONLY | constants.O_NONBLOCK), readable: false, writable: true });
  return { input, write: (bytes) => writer.end(bytes) };
}

/** Bytes that tell every position apart (3 MiB: more than an early copy holds). */
function pattern(size = 3 * MiB): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE(i, i);
  return bytes;
}

/** Runs `then` `turns` turns of the event loop from now (each turn polls for I/O). */
function afterTurns(turns: number, then: () => void): void {
  setImmediate(() => (turns > 1 ? afterTurns(turns - 1, then) : then()));
}

/**
 * An output that takes each write some turns of the event loop later, past the next reads of the
 * FIFO, keeping what it was given only then.
 */
function lateOutput(): { stream: Writable; bytes: () => Buffer } {
  const kept: Buffer[] = [];
  const stream = new Writable({
    // write() says true until 8 MiB wait: only the write callback tells when a chunk is taken.
    highWaterMark: 8 * MiB,
    write(chunk: Buffer, _encoding, done) {
      afterTurns(8, () => {
        kept.push(Buffer.from(chunk));
        done();
      });
    },
  });
  return { stream, bytes: () => Buffer.concat(kept) };
}

/** Event loop turns (each one polls for I/O) until `done` holds; a bound, not a sleep. */
async function turnsUntil(done: () => boolean, most = 100_000): Promise<void> {
  for (let turn = 0; !done(); turn++) {
    if (turn === most) throw new Error(`not done after ${most} turns`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("stdin read in place", () => {
  it("should give every byte in order, each chunk a view of one buffer, and start paused", async () => {
    const { input, write } = fifo();
    expect(readsInPlace(input)).toBe(true);
    expect(input.isPaused()).toBe(true);
    const sent = pattern();
    write(sent);
    const copies: Buffer[] = [];
    const buffers = new Set<ArrayBufferLike>();
    input.on("data", (chunk: Buffer) => {
      buffers.add(chunk.buffer);
      copies.push(Buffer.from(chunk));
    });
    input.resume();
    await new Promise((resolve) => input.once("end", resolve));
    expect(Buffer.concat(copies).equals(sent)).toBe(true);
    expect(copies.length).toBeGreaterThan(1);
    expect(buffers.size).toBe(1);
  });

  it("should not be read again until what the passthrough wrote from its buffer has left", async () => {
    const { input, write } = fifo();
    const output = lateOutput();
    const sent = pattern();
    write(sent);
    const seen: Buffer[] = [];
    await passthrough({ input, output: output.stream, onChunk: (chunk) => void seen.push(Buffer.from(chunk)) }).done;
    expect(output.bytes().equals(sent)).toBe(true);
    expect(Buffer.concat(seen).equals(sent)).toBe(true);
  });

  it(`should keep an early copy's ${HELD_LIMIT / MiB} MiB limit while writes from its buffer are under way`, async () => {
    const { input, write } = fifo();
    const output = lateOutput();
    const copy = new EarlyCopy(input, output.stream);
    const sent = pattern();
    write(sent);
    await turnsUntil(() => output.bytes().length >= HELD_LIMIT);
    let turns = 0;
    await turnsUntil(() => ++turns === 200);
    expect(input.isPaused()).toBe(true);
    expect(output.bytes().length).toBeLessThanOrEqual(HELD_LIMIT + 64 * 1024);
    const seen: Buffer[] = [];
    await copy.adopt((chunk) => void seen.push(Buffer.from(chunk))).done;
    expect(Buffer.concat(seen).equals(sent)).toBe(true);
  });

  it("should have an early copy hold copies of what it read before it was adopted", async () => {
    const { input, write } = fifo();
    const output = lateOutput();
    const copy = new EarlyCopy(input, output.stream);
    const sent = pattern(HELD_LIMIT - MiB / 2);
    write(sent);
    await copy.stream.ended;
    const seen: Buffer[] = [];
    await copy.adopt((chunk) => void seen.push(Buffer.from(chunk))).done;
    expect(Buffer.concat(seen).equals(sent)).toBe(true);
    expect(output.bytes().equals(sent)).toBe(true);
  });
});
