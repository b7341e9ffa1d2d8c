// Runs `runServe` from the built dist in a child process, as the CLI would.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";
import type { ServeOptions } from "../../src/server/index.js";

const SERVER_MODULE = new URL("../../dist/server/index.js", import.meta.url);

const SCRIPT = `
const { runServe } = await import(process.env.USPARK_SERVER_MODULE);
await runServe(JSON.parse(process.env.USPARK_SERVE_OPTIONS));
`;

export interface ServeChild {
  child: ChildProcess;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the URL from the "listening on" line. */
  listening(): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stderr contains `text` (rejects if the child exits first). */
  waitForStderr(text: string | RegExp): Promise<void>;
}

export function spawnServe(options: ServeOptions, timeoutMs = 10_000): ServeChild {
  if (!existsSync(SERVER_MODULE)) {
    throw new Error(`${fileURLToPath(SERVER_MODULE)} is missing: build first with \`npx tsc -p .\``);
  }
  const child = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT], {
    env: {
      ...process.env,
      USPARK_SERVER_MODULE: SERVER_MODULE.href,
      USPARK_SERVE_OPTIONS: JSON.stringify(options),
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  let text = "";
  const waiters = new Set<() => void>();
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
    for (const check of waiters) check();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  // 'close' comes after 'exit' and after the last stderr output.
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));

  const waitFor = <T>(match: () => T | undefined, what: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      let settled = false;
      const check = () => {
        const value = match();
        if (value !== undefined) finish(() => resolve(value));
      };
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        waiters.delete(check);
        clearTimeout(timer);
        settle();
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${text}`))), timeoutMs);
      void closed.then(() => {
        check();
        finish(() => reject(new Error(`server exited before ${what}; stderr:\n${text}`)));
      });
      waiters.add(check);
      check();
    });

  return {
    child,
    stderr: () => text,
    listening: () => waitFor(() => /listening on (http:\/\/\S+)/.exec(text)?.[1], "the listening line"),
    exited,
    waitForStderr: (pattern) =>
      waitFor(
        () => ((typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) ? true : undefined),
        `stderr to contain ${pattern}`,
      ).then(() => {}),
  };
}
