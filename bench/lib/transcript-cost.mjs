// `--transcript` beside no transcript: the same session through `uspark watch-claude` syncing to
// the reference server on 127.0.0.1, best wall time of `rounds` each (the run ends when stdout is
// drained and the last append and commit are answered), and the bytes the server then holds.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { sh, timeShell } from "./measure.mjs";

export async function measureTranscript({ repo, bin, root, work, sessionPath, rounds }) {
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const server = await startServer({ dataDir: path.join(work, "transcript-data"), port: 0, host: "127.0.0.1" });
  const err = path.join(work, "transcript.stderr");
  const command = (projectId, extra) =>
    `cat ${sh(sessionPath)} | ${sh(process.execPath)} ${sh(bin)} watch-claude --no-fs-watch --project-id ${projectId} ` +
    `--api-url ${server.url} --root ${sh(root)} ${extra} > /dev/null 2> ${sh(err)}`;
  const best = { off: Infinity, on: Infinity };
  try {
    for (let round = 0; round < rounds; round++) {
      best.off = Math.min(best.off, await timeShell(command("bench-off", "")));
      best.on = Math.min(best.on, await timeShell(command("bench-on", "--transcript")));
    }
    const listing = await (await fetch(`${server.url}/api/projects/bench-on/sessions`)).json();
    return { seconds: best, sessions: listing.sessions.map((s) => s.length) };
  } finally {
    await server.close();
  }
}
