// End of input to exit: how long `uspark watch` takes to leave once its stdin ends with nothing
// pending (issue 11 item 6: the settle barrier instead of a fixed sleep).
import { spawn } from "node:child_process";

/**
 * Starts `args` (a node script and its arguments) with --verbose output on stderr, waits until it
 * says its file watcher is ready (`ready`, a pattern), or `afterMs` when it has no watcher to wait
 * for, writes one line, ends stdin and resolves with the milliseconds from the end of stdin to
 * the exit.
 */
export function endToExit(args, { ready = /ready in \d+ ms/, afterMs, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["pipe", "ignore", "pipe"], env: env ?? process.env });
    let stderr = "";
    let endedAt;
    const end = () => {
      child.stdin.write("{}\n");
      child.stdin.end(() => (endedAt = performance.now()));
    };
    child.stderr.on("data", (chunk) => {
      const wasReady = ready === undefined || ready.test(stderr);
      stderr += chunk;
      if (!wasReady && ready.test(stderr)) end();
    });
    if (afterMs !== undefined) {
      ready = undefined;
      setTimeout(end, afterMs);
    }
    child.stdin.on("error", () => {});
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const exitedAt = performance.now();
      if (endedAt === undefined || code !== 0) reject(new Error(`${args.join(" ")} exited (${code ?? signal}) unexpectedly:\n${stderr.slice(-2000)}`));
      else resolve(exitedAt - endedAt);
    });
  });
}
