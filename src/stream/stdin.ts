import { fstatSync } from "node:fs";
import { Socket, type OnReadOpts, type SocketConstructorOpts } from "node:net";
import type { Readable } from "node:stream";

/** What one read of stdin takes at most: a pipe holds 64 KiB. */
const READ_BYTES = 64 * 1024;

const inPlace = new WeakSet<Readable>();
let stdin: Readable | undefined;

/**
 * The agent's output on stdin. When stdin is a pipe or a socket (an agent piped in, a parent's
 * spawn) it is read into one 64 KiB buffer used again for every read, not into a fresh buffer
 * per read as Node's `process.stdin` does. Fresh memory is what costs most when bytes pass
 * through: the page faults of new buffers, and the first read of pages the kernel filled (on a
 * 2-core VM, a 200 MiB buffer just read took 586 ms to touch once, 4 ms the second time). With
 * one warm buffer a 200 MiB session through `watch-claude` costs a fifth to a quarter less CPU
 * (`npm run bench`, throughput).
 *
 * So each 'data' chunk is a view of that buffer, valid only until its listeners return: whoever
 * keeps bytes copies them, and the next read waits until what was written from the buffer has
 * left the process (`passthrough`). A terminal or a file stays `process.stdin`. The same stream
 * on every call.
 */
export function agentStdin(): Readable {
  stdin ??= isPipe(0) ? readInPlace(0) : process.stdin;
  return stdin;
}

/** Does `input` hand out views of one buffer that its next read overwrites? */
export function readsInPlace(input: Readable): boolean {
  return inPlace.has(input);
}

/** A readable stream of the pipe or socket `fd`, each chunk a view of one reused buffer; paused. */
export function readInPlace(fd: number): Readable {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  const onread: OnReadOpts = {
    buffer,
    callback: (bytes) => {
      socket.emit("data", buffer.subarray(0, bytes));
      return true;
    },
  };
  // `onread` is a constructor option (Node's docs) that @types/node lists for connect() only.
  const socket: Socket = new Socket({ fd, readable: true, writable: false, onread } as SocketConstructorOpts);
  // It starts reading at once, and a chunk no one listens to is lost: paused until resumed.
  socket.pause();
  inPlace.add(socket);
  return socket;
}

function isPipe(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}
