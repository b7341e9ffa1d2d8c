// `--transcript` beside no transcript: the same session through `uspark watch-claude` (syncing,
// to the reference server on 127.0.0.1), once each a round: the best of each and each round's own
// ratio of when the last byte reached the reader of stdout (passthrough throughput), the best
// time to exit (the last append answered), and the bytes the server then holds. The root is an empty directory, so that no file sync
// competes with the transcript for the two cores: the session's paths are all outside it.
import { mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createProject, sh, timeShell } from "./measure.mjs";

/** Reads stdin to the end; writes the epoch ms at which byte number argv[1] arrived to argv[2]. */
const LAST_BYTE = `let n=0;const total=Number(process.argv[1]);process.stdin.on("data",(c)=>{n+=c.length;if(n===total)require("fs").writeFileSync(process.argv[2],String(Date.now()))})`;

export async function measureTranscript({ repo, bin, work, sessionPath, rounds }) {
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const server = await startServer({ dataDir: path.join(work, "transcript-data"), port: 0, host: "127.0.0.1" });
  for (const id of ["bench-off", "bench-on"]) await createProject(server.url, id);
  const root = path.join(work, "transcript-root");
  mkdirSync(root, { recursive: true });
  const bytes = statSync(sessionPath).size;
  const stamp = path.join(work, "last-byte");
  // A pipeline's status is its last command's (the reader's): uspark's own is kept in a file.
  const status = path.join(work, "uspark-status");
  const exitCodes = [];
  const run = async (projectId, extra) => {
    const command =
      `cat ${sh(sessionPath)} | { ${sh(process.execPath)} ${sh(bin)} watch-claude --no-fs-watch --project-id ${projectId} ` +
      `--api-url ${server.url} --root ${sh(root)} ${extra} 2> /dev/null; echo $? > ${sh(status)}; } | ${sh(process.execPath)} -e ${sh(LAST_BYTE)} ${bytes} ${sh(stamp)}`;
    const started = Date.now();
    const exit = await timeShell(command);
    exitCodes.push(Number(readFileSync(status, "utf8")));
    return { stdout: (Number(readFileSync(stamp, "utf8")) - started) / 1000, exit };
  };
  const best = { off: { stdout: Infinity, exit: Infinity }, on: { stdout: Infinity, exit: Infinity } };
  const keepBest = (key, times) => {
    best[key].stdout = Math.min(best[key].stdout, times.stdout);
    best[key].exit = Math.min(best[key].exit, times.exit);
  };
  // Each round's own ratio (with over without, stdout complete): a noisy machine's two bests may
  // come from different moments, a round's two runs from the same one.
  const roundRatios = [];
  /** The runs in the order made ("off", "on"). */
  const order = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // Turn about: a run right after one with --transcript is some 3% slower (the in-process
      // server has just taken 200 MiB), so neither side always comes second.
      const turn = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
      const times = {};
      for (const key of turn) {
        order.push(key);
        times[key] = key === "on" ? await run("bench-on", "--transcript") : await run("bench-off", "");
        keepBest(key, times[key]);
      }
      roundRatios.push(times.on.stdout / times.off.stdout);
    }
    const listing = await (await fetch(`${server.url}/api/projects/bench-on/sessions`)).json();
    return { bytes, seconds: best, roundRatios, order, sessions: listing.sessions.map((s) => s.length), exitCodes };
  } finally {
    await server.close();
  }
}
