// End of input to exit: how long `uspark watch` takes to leave once its stdin ends with nothing
// pending (issue 11 item 6: the settle barrier instead of a fixed sleep).
import { spawn } from "node:child_process";

/**
 * Starts `args` (a node script and its arguments: `uspark watch … --verbose --log-format json`),
 * waits for the debug record of its `scan` scan ("ready": the one after the file watcher's first
 * walk; "start" when there is no watcher) saying there is nothing to sync, writes one line, ends
 * stdin and resolves with the milliseconds from the end of stdin to the exit. Rejects (and kills
 * it) when that scan finds something to sync (the project was not in sync with the server to
 * begin with), or when no such record comes within `timeoutMs` (a build without scans?).
 * `onScan(record, ms)`: that scan's record, and the milliseconds from the spawn to it.
 */
export function endToExit(args, { scan, timeoutMs = 30_000, onScan }) {
  return new Promise((resolve, reject) => {
    const spawnedAt = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    let partial = "";
    let ended = false;
    let endedAt;
    const fail = (why) => {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`${args.join(" ")}: ${why}:\n${stderr.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`no "${scan} scan" record in ${timeoutMs} ms (a build without start-up scans?)`), timeoutMs);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop();
      for (const line of ended ? [] : lines) {
        let record;
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        if (record.event !== "scan" || record.cause !== scan) continue;
        if (record.targets?.length !== 0) return fail(`the ${scan} scan found ${record.targets?.length} files to sync, expected none`);
        onScan?.(record, performance.now() - spawnedAt);
        ended = true;
        clearTimeout(timer);
        child.stdin.write("{}\n");
        child.stdin.end(() => (endedAt = performance.now()));
        break;
      }
    });
    child.stdin.on("error", () => {});
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const exitedAt = performance.now();
      clearTimeout(timer);
      if (endedAt === undefined || code !== 0)
        reject(new Error(`${args.join(" ")} exited (${code ?? signal}) unexpectedly:\n${stderr.slice(-2000)}`));
      else resolve(exitedAt - endedAt);
    });
  });
}
