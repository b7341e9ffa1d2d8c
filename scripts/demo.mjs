#!/usr/bin/env node
// The README's demo: start the reference server on a free port, play a recorded Claude session
// (its edits are applied to a fresh temp project as the agent would have) through
// `uspark watch-claude`, then show what the server now holds. `--uspark <path>` runs an installed
// uspark instead of this checkout's (.ci/run does, with the one installed from the packed tarball).

import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({ options: { uspark: { type: "string" } } });
const uspark = values.uspark ?? path.join(repo, "bin", "uspark.js");
/** An installed uspark runs as a command; the checkout's bin/uspark.js with this Node. */
const usparkCommand = (args) => (values.uspark === undefined ? [process.execPath, [uspark, ...args]] : [uspark, args]);
const session = path.join(repo, "fixtures", "claude", "session.jsonl");
const work = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-demo-")));
const project = path.join(work, "project");
const data = path.join(work, "server-data");

const say = (text) => process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);

function startServer() {
  const server = spawn(...usparkCommand(["serve", "--data", data, "--port", "0"]), { stdio: ["ignore", "inherit", "pipe"] });
  return new Promise((resolve, reject) => {
    let text = "";
    server.stderr.on("data", (chunk) => {
      process.stderr.write(chunk);
      text += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
      if (url) resolve({ server, url });
    });
    server.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
}

function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, options);
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
}

const { server, url } = await startServer();
try {
  // Projects exist only once created (API v1.2).
  const created = await fetch(`${url}/api/projects`, { method: "POST", body: JSON.stringify({ id: "demo" }) });
  if (created.status !== 201) throw new Error(`creating the project answered ${created.status}: ${await created.text()}`);
  await import("node:fs").then((fs) => fs.mkdirSync(project, { recursive: true }));
  say(`an agent session in ${project}, piped through: uspark watch-claude --project-id demo --api-url ${url}`);
  const agent = spawn(process.execPath, [path.join(repo, "scripts", "play-session.mjs"), session, "--root", project, "--delay", "40"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const watcher = spawn(
    ...usparkCommand(["watch-claude", "--project-id", "demo", "--api-url", url, "--root", project, "--debounce", "100"]),
    {
      stdio: [agent.stdout, "ignore", "inherit"],
    },
  );
  const code = await new Promise((resolve) => watcher.once("exit", resolve));
  say(`uspark exited with ${code}; the server now holds (GET ${url}/api/projects/demo/files):`);
  const files = await (await fetch(`${url}/api/projects/demo/files`)).json();
  for (const file of files.files)
    console.log(`  ${file.path.padEnd(28)} ${String(file.size).padStart(5)} bytes  sha256 ${file.sha256.slice(0, 12)}…`);
  console.log(`  (version ${files.version})`);
  say("the same files on disk:");
  await run("find", [project, "-type", "f", "-not", "-path", "*/.uspark/*"], { stdio: "inherit" });
  process.exitCode = code ?? 1;
} finally {
  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
  rmSync(work, { recursive: true, force: true });
}
