// Scans at scale (issue 19): a project of `files` files already in sync with the reference server;
// how long the start scan of `uspark watch --no-fs-watch` takes (the stat base: no file read)
// against a plain directory walk of the same tree, and from the end of stdin to the exit with
// nothing pending, with the file watcher (the default) and without it (then an end scan is due).
import { spawnSync } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { endToExit } from "./exit-time.mjs";
import { createProject, median, untilExit } from "./measure.mjs";

/** A walk that only lists (readdir with types), as `find` would: the floor of any scan. */
const PLAIN_WALK = `const fs=require("fs"),p=require("path");let n=0;const w=(d)=>{for(const e of fs.readdirSync(d,{withFileTypes:true})){if(e.isDirectory())w(p.join(d,e.name));else n++}};const t=performance.now();w(process.argv[1]);console.error(JSON.stringify({files:n,ms:performance.now()-t}))`;
/** The same with an lstat of every file, as `find -printf %s` would: the floor of a scan that must see sizes and times. */
const STAT_WALK = `const fs=require("fs"),p=require("path");let n=0;const w=(d)=>{for(const e of fs.readdirSync(d,{withFileTypes:true})){const f=p.join(d,e.name);if(e.isDirectory())w(f);else{fs.lstatSync(f);n++}}};const t=performance.now();w(process.argv[1]);console.error(JSON.stringify({files:n,ms:performance.now()-t}))`;

export async function measureScanScale({ repo, bin, work, files, rounds }) {
  const root = path.join(work, "scale");
  // An existing checkout: files written long before (a stat read within seconds of a write is not trusted, and is hashed).
  const longAgo = new Date(Date.now() - 3600_000);
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `pkg${(i % 1000) % 50}`, `mod${i % 1000}`);
    if (i < 1000) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `file${i}.ts`), `export const v${i} = ${i};\n`);
    utimesSync(path.join(dir, `file${i}.ts`), longAgo, longAgo);
  }
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const server = await startServer({ dataDir: path.join(work, "scale-data"), port: 0, host: "127.0.0.1", quiet: true });
  try {
    await createProject(server.url, "scale");
    const connection = ["--project-id", "scale", "--api-url", server.url, "--root", root];
    await untilExit([bin, "push", ...connection, "--quiet"]);
    const walks = [];
    const statWalks = [];
    const scans = [];
    const ready = [];
    const exits = [];
    const exitsNoFs = [];
    const args = [bin, "watch", ...connection, "--verbose", "--log-format", "json"];
    for (let round = 0; round < rounds; round++) {
      walks.push(timedWalk(PLAIN_WALK, root));
      statWalks.push(timedWalk(STAT_WALK, root));
      // Without the file watcher: the start scan alone, and the end scan every exit needs then.
      const onScan = (record, ms) => {
        ready.push(ms);
        scans.push(Number(/\((\d+) ms\)/.exec(record.message)?.[1]));
      };
      exitsNoFs.push(await endToExit([...args, "--no-fs-watch"], { scan: "start", timeoutMs: 600_000, onScan }));
      // With it (the default): its ready scan done, then the end of stdin.
      exits.push(await endToExit(args, { scan: "ready", timeoutMs: 600_000 }));
    }
    return {
      files,
      walkMs: median(walks),
      statWalkMs: median(statWalks),
      scanMs: median(scans),
      readyMs: median(ready),
      exitMs: median(exits),
      exitNoFsMs: median(exitsNoFs),
    };
  } finally {
    await server.close();
  }
}

function timedWalk(script, root) {
  const run = spawnSync(process.execPath, ["-e", script, root], { encoding: "utf8" });
  return JSON.parse(run.stderr.trim().split("\n").pop()).ms;
}
