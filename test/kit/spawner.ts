import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";

/**
 * Children of the test worker, started by a small process of their own (spawner.mjs), not by
 * the worker. Node forks to spawn. On this VM a page fault costs ~17 µs (shadow page tables),
 * and a fork write-protects every page of the process that forks: each page the worker writes
 * afterwards faults. A vitest worker holds 200-400 MB that its garbage collector rewrites, and the
 * suite spawns the CLI and tmux some 480 times. Measured on the whole suite: the workers' page
 * faults 1.04-1.09 M -> 0.77-0.80 M, their CPU 98-110 s -> 88-96 s; the spawners cost ~4 s.
 * The child is the same: command, arguments, working directory and environment as asked, its
 * stdio sockets held by the worker only.
 */
export interface SpawnedChild extends EventEmitter {
  readonly pid: number;
  readonly stdin: Socket;
  readonly stdout: Socket;
  readonly stderr: Socket;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly killed: boolean;
  /** As ChildProcess.kill: false when the child has exited or could not be signalled. */
  kill(signal?: NodeJS.Signals): boolean;
}

export interface SpawnOptions {
  cwd?: string;
  /** The child's whole environment (default: the worker's, as it is now). */
  env?: NodeJS.ProcessEnv;
}

interface Message {
  id: number;
  pid?: number;
  stdio?: 0 | 1 | 2;
  code?: number | null;
  signal?: NodeJS.Signals | null;
  error?: { message: string; code?: string };
}

const SPAWNER = fileURLToPath(new URL("./spawner.mjs", import.meta.url));

/**
 * A child as ChildProcess gives it: 'exit' when it exits (stdin then destroyed), 'close' once
 * it has exited and its stdout and stderr are closed.
 */
class Child extends EventEmitter implements SpawnedChild {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  private closesNeeded = 3;

  constructor(
    readonly pid: number,
    readonly stdin: Socket,
    readonly stdout: Socket,
    readonly stderr: Socket,
  ) {
    super();
    // A socket reads from the moment it arrives: stdout may have ended and closed already, while
    // the worker waited for stderr.
    for (const stream of [stdout, stderr]) {
      if (stream.closed) this.maybeClose();
      else stream.once("close", () => this.maybeClose());
    }
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.exitCode !== null || this.signalCode !== null) return false;
    try {
      process.kill(this.pid, signal);
    } catch {
      return false;
    }
    this.killed = true;
    return true;
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitCode = code;
    this.signalCode = signal;
    this.stdin.destroy();
    this.emit("exit", code, signal);
    // As ChildProcess does: output nobody reads is let through, so that 'close' comes.
    process.nextTick(() => {
      for (const stream of [this.stdout, this.stderr]) if (stream.readable && stream.listenerCount("readable") === 0) stream.resume();
    });
    this.maybeClose();
  }

  private maybeClose(): void {
    if (--this.closesNeeded === 0) this.emit("close", this.exitCode, this.signalCode);
  }
}

interface Starting {
  resolve: (child: Child) => void;
  reject: (error: Error) => void;
  pid?: number;
  stdio: Socket[];
}

/** The worker's spawner: started at first use, gone with the worker. */
class Spawner {
  private readonly process: ChildProcess;
  private readonly starting = new Map<number, Starting>();
  private readonly running = new Map<number, Child>();
  private nextId = 0;

  constructor(onExit: () => void) {
    this.process = spawn(process.execPath, [SPAWNER], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
    this.process.on("message", (message: Message, handle?: Socket) => this.received(message, handle));
    this.process.once("exit", () => {
      onExit();
      this.failAll(new Error("the test spawner exited"));
    });
    this.process.unref();
    this.holdWorker();
  }

  spawn(command: string, args: string[], options: SpawnOptions): Promise<SpawnedChild> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.starting.set(id, { resolve, reject, stdio: [] });
      this.holdWorker();
      this.process.send({ id, command, args, cwd: options.cwd ?? process.cwd(), env: options.env ?? process.env });
    });
  }

  private received(message: Message, handle: Socket | undefined): void {
    const starting = this.starting.get(message.id);
    if (message.error) {
      this.starting.delete(message.id);
      starting?.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
    } else if (message.stdio !== undefined && starting && handle) {
      starting.pid ??= message.pid;
      starting.stdio[message.stdio] = handle;
      if (message.stdio < 2) return;
      this.starting.delete(message.id);
      const [stdin, stdout, stderr] = starting.stdio as [Socket, Socket, Socket];
      const child = new Child(starting.pid!, stdin, stdout, stderr);
      this.running.set(message.id, child);
      starting.resolve(child);
    } else if (message.stdio === undefined) {
      const child = this.running.get(message.id);
      this.running.delete(message.id);
      child?.exited(message.code ?? null, message.signal ?? null);
    }
    this.holdWorker();
  }

  /** The channel keeps the worker's event loop alive while a child may still say something. */
  private holdWorker(): void {
    if (this.starting.size + this.running.size > 0) this.process.channel?.ref();
    else this.process.channel?.unref();
  }

  private failAll(error: Error): void {
    for (const starting of this.starting.values()) starting.reject(error);
    for (const child of this.running.values()) child.emit("error", error);
    this.starting.clear();
    this.running.clear();
  }
}

let spawner: Spawner | undefined;

/** Starts `command` from the worker's spawner; resolves once the child runs and its stdio is the worker's. */
export function spawnChild(command: string, args: string[], options: SpawnOptions = {}): Promise<SpawnedChild> {
  spawner ??= new Spawner(() => (spawner = undefined));
  return spawner.spawn(command, args, options);
}
