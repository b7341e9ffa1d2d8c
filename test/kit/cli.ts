import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnChild, type SpawnedChild } from "./spawner.js";

/**
 * The built CLI, run as users run it: a child process with real pipes (started by the worker's
 * spawner, which spares the worker a fork: spawner.ts). USPARK_CLI runs another
 * build instead (an older one, to see a test fail on the defect it names).
 */
export const CLI = process.env.USPARK_CLI ?? fileURLToPath(new URL("../../bin/uspark.js", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
}

export interface CliOptions {
  /** Bytes written to stdin (then closed); omit to drive stdin yourself through `child`. */
  input?: Buffer | string | Iterable<Buffer>;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Upper bound for the whole run; the child is killed past it and the test fails. */
  timeoutMs?: number;
  /**
   * false: stdout is not collected (`result.stdout` is empty), for a stream too large to hold;
   * read `child.stdout` yourself.
   */
  keepStdout?: boolean;
}

let workerHome: string | undefined;

/**
 * The CLI's HOME when a test gives none: one of this worker's, so that no run reads the
 * developer's ~/.uspark/config.json nor records the servers it was given there.
 */
function isolatedHome(): string {
  if (workerHome === undefined) {
    const made = mkdtempSync(path.join(tmpdir(), "uspark-home-"));
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
    workerHome = made;
  }
  return workerHome;
}

/** Resolves once the CLI runs: its stdio is the caller's to drive, `result` comes when it has exited and closed its output. */
export async function startCli(args: string[], options: CliOptions = {}): Promise<{ child: SpawnedChild; result: Promise<CliResult> }> {
  const child = await spawnChild(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { ...process.env, HOME: isolatedHome(), NO_COLOR: "1", FORCE_COLOR: undefined, ...options.env },
  });
  const stdout: Buffer[] = [];
  let stderr = "";
  if (options.keepStdout !== false) child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  else child.stdout.resume();
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on("error", () => {}); // a child that exits early closes its stdin: not the test's concern
  const result = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`uspark ${args.join(" ")} did not exit within ${options.timeoutMs ?? 20_000} ms; stderr:\n${stderr}`));
    }, options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(stdout), stderr });
    });
  });
  if (options.input !== undefined) void feed(child, options.input);
  return { child, result };
}

export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return (await startCli(args, { input: "", ...options })).result;
}

async function feed(child: SpawnedChild, input: Buffer | string | Iterable<Buffer>): Promise<void> {
  const chunks = typeof input === "string" || Buffer.isBuffer(input) ? [Buffer.from(input)] : input;
  for (const chunk of chunks) {
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once("drain", resolve));
  }
  child.stdin.end();
}

/** Resolves when `predicate` holds for the text seen so far on the stream, or fails after `timeoutMs`. */
export function waitForOutput(stream: NodeJS.ReadableStream, predicate: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => {
      stream.off("data", onData);
      reject(new Error(`timed out waiting for output; saw:\n${text}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (predicate(text)) {
        clearTimeout(timer);
        stream.off("data", onData);
        resolve(text);
      }
    };
    stream.on("data", onData);
  });
}
