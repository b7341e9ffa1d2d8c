import type { Readable, Writable } from "node:stream";
import { passthrough, type Passthrough, type PassthroughOptions } from "./passthrough.js";

/**
 * The pipe form's copy of stdin to stdout, started by bin/uspark.js before the rest of the CLI
 * loads (src/commands/kit/pipe-form.ts, this module and the passthrough are all it loads first): the agent's first bytes never
 * wait on our start-up, some 60 ms of it. What was copied before the session adopts the copy is
 * held, and handed to the session's detection first. Until then reading stops whenever
 * `HELD_LIMIT` bytes are held, so that a fast agent cannot make us hold much.
 */
export const HELD_LIMIT = 2 * 1024 * 1024;

type ChunkSink = PassthroughOptions["onChunk"];
type ErrorSink = NonNullable<PassthroughOptions["onOutputError"]>;

export class EarlyCopy {
  readonly stream: Passthrough;
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Reading is held until adoption: the limit was reached. */
  private heldForLimit = false;
  private markAdopted = () => {};
  private readonly adopted = new Promise<void>((resolve) => (this.markAdopted = resolve));
  private outputError: NodeJS.ErrnoException | undefined;
  private onChunk: ChunkSink | undefined;
  private onOutputError: ErrorSink | undefined;

  constructor(
    readonly input: Readable,
    readonly output: Writable,
  ) {
    this.stream = passthrough({ input, output, onChunk: (chunk) => this.chunk(chunk), onOutputError: (error) => this.failed(error) });
    // A read that fails is said by whoever adopts the copy; before that it must not be an unhandled rejection.
    this.stream.done.catch(() => {});
  }

  /** The session takes over: what was copied so far comes first, then each chunk as it comes. */
  adopt(onChunk: ChunkSink, onOutputError: ErrorSink = () => {}): Passthrough {
    this.onChunk = onChunk;
    this.onOutputError = onOutputError;
    // The output failed while the bytes were held, before anything looked at them: said first.
    if (this.outputError !== undefined) onOutputError(this.outputError);
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const chunk of held) {
      const wait = onChunk(chunk);
      if (wait instanceof Promise) this.stream.holdUntil(wait);
    }
    this.markAdopted();
    return this.stream;
  }

  private chunk(chunk: Buffer): void | Promise<void> {
    if (this.onChunk !== undefined) return this.onChunk(chunk);
    this.held.push(Buffer.from(chunk)); // a copy: the chunk may be a view of a buffer read into again
    this.heldBytes += chunk.length;
    if (this.heldBytes >= HELD_LIMIT && !this.heldForLimit) {
      this.heldForLimit = true;
      this.stream.holdUntil(this.adopted);
    }
  }

  private failed(error: NodeJS.ErrnoException): void {
    if (this.onOutputError !== undefined) this.onOutputError(error);
    else this.outputError ??= error;
  }
}

let started: EarlyCopy | undefined;

/** Starts the copy of `input` to `output` that `passthroughOf` hands over later (see `startPipeFormCopy`). */
export function startEarlyCopy(input: Readable, output: Writable): void {
  started = new EarlyCopy(input, output);
}

/** A passthrough of `input`: the early copy of it when bin/uspark.js started one (taken once), else a new one. */
export function passthroughOf(options: PassthroughOptions): Passthrough {
  const early = started?.input === options.input && started.output === options.output ? started : undefined;
  if (early === undefined) return passthrough(options);
  started = undefined;
  return early.adopt(options.onChunk, options.onOutputError);
}
