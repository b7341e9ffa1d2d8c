// The reliability suite's harness: the built CLI driven through real pipes, a fault-injecting
// proxy in front of the reference server on 127.0.0.1, and the checks every run ends with.

import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { startCli, waitForOutput, type CliResult } from "../kit/cli.js";
import type { SpawnedChild } from "../kit/spawner.js";
import { startProxy, tempDir, type Action, type Proxy, type SeenRequest } from "../kit/sync.js";
import { play, type PlayControl, type Played, type SessionPlan } from "./session.js";

/** Soak mode (`npm run soak`): the real 30 s outage and more fuzzing. */
export const SOAK = process.env.USPARK_SOAK === "1";

/** Per-test bound: generous, since a 2-core CI machine runs several test files at once. */
export const TIMEOUT_MS = SOAK ? 600_000 : 120_000;

/** A bearer token that must never be printed, journaled or sent anywhere but the API origin. */
export function newToken(): string {
  return `tok-${randomUUID()}-secret`;
}

/** A temp dir holding `proj/` (the root) and `home/` (HOME, so no ~/.uspark/config.json is read). */
export async function workspace(prefix: string): Promise<{ base: string; root: string; home: string; cleanup: () => Promise<void> }> {
  const { dir: base, cleanup } = await tempDir(prefix);
  const root = path.join(base, "proj");
  const home = path.join(base, "home");
  await mkdir(root);
  await mkdir(home);
  return { base, root, home, cleanup };
}

/** Environment for a CLI run: nothing from the developer's settings leaks in. */
export function cliEnv(home: string, token: string | undefined): NodeJS.ProcessEnv {
  return { HOME: home, USPARK_TOKEN: token, USPARK_API_URL: undefined, USPARK_PROJECT_ID: undefined, CHOKIDAR_USEPOLLING: undefined };
}

/**
 * The proxy on a port below the kernel's ephemeral range, so that while it is down (outage) no
 * other test's port-0 socket can take its port.
 */
export async function faultProxy(upstream: string, rule: (req: SeenRequest) => Action | undefined): Promise<Proxy> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      return await startProxy(upstream, rule, { port });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt > 50) throw error;
    }
  }
}

export interface WatchRun extends Played {
  result: CliResult;
}

export interface WatchOptions {
  root: string;
  home: string;
  token: string;
  apiUrl: string;
  projectId: string;
  plan: SessionPlan;
  extraArgs?: string[];
  control?: PlayControl;
  timeoutMs?: number;
  /** Runs alongside the session (e.g. kills the server at random moments). */
  alongside?: (child: SpawnedChild) => Promise<void>;
  /** Called once the CLI runs, before the session is played. */
  onStart?: (child: SpawnedChild) => void;
}

/**
 * Runs `uspark watch-claude` (verbose, JSON log) and plays the session into it once its file
 * watcher is ready; resolves when the CLI has exited.
 */
export async function watchSession(options: WatchOptions): Promise<WatchRun> {
  const args = [
    "watch-claude",
    "--project-id",
    options.projectId,
    "--api-url",
    options.apiUrl,
    "--root",
    options.root,
    "--debounce",
    "25",
    "--max-wait",
    "250",
    "--verbose",
    "--log-format",
    "json",
    ...(options.extraArgs ?? []),
  ];
  const { child, result } = await startCli(args, {
    cwd: options.root,
    env: cliEnv(options.home, options.token),
    timeoutMs: options.timeoutMs ?? 90_000,
  });
  options.onStart?.(child);
  // Edits made before the file watcher has its picture of the tree would look like old files.
  await waitForOutput(child.stderr, (text) => text.includes('"event":"fswatch"'), 20_000);
  const [played] = await Promise.all([play(child, options.plan, options.control), options.alongside?.(child)]);
  return { ...played, result: await result };
}

/** The token appears nowhere it must not: stdout, stderr (text or JSON log), the journal. */
export function expectNoToken(token: string, outputs: Record<string, string | Buffer>): void {
  for (const [name, output] of Object.entries(outputs)) {
    const text = Buffer.isBuffer(output) ? output.toString("latin1") : output;
    expect(text.includes(token), `the token appears in ${name}`).toBe(false);
  }
}

/** Every request that reached the proxy (the configured API origin) carried the token. */
export function expectTokenOnlyToApi(proxy: Proxy, token: string): void {
  for (const req of proxy.seen) expect(req.headers.authorization).toBe(`Bearer ${token}`);
}

/** Shorthand for fault rules. */
export const answer = (status: number, headers: Record<string, string> = {}): Action => ({
  kind: "answer",
  status,
  headers,
  body: { error: status === 429 ? "rate_limited" : "unavailable", message: `injected ${status}` },
});
