#!/usr/bin/env node
// Installs the pinned agents of test/agents (from the lockfile), unless node_modules already holds exactly
// this lockfile's install (a stamp of its hash). `--update` bumps every pin to @latest first.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dir = path.dirname(fileURLToPath(import.meta.url));
const npm = (...args) => execFileSync("npm", args, { cwd: dir, stdio: "inherit" });

if (process.argv.includes("--update")) {
  const names = Object.keys(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).dependencies);
  // No install scripts: the agents' binaries come as platform packages, run directly.
  npm("install", "--save-exact", "--ignore-scripts", "--no-audit", "--no-fund", ...names.map((name) => `${name}@latest`));
}

const lock = readFileSync(path.join(dir, "package-lock.json"));
const hash = createHash("sha256").update(lock).digest("hex");
const stamp = path.join(dir, "node_modules", ".uspark-lock-hash");
if (existsSync(stamp) && readFileSync(stamp, "utf8") === hash) {
  console.error("agents: node_modules matches package-lock.json, not reinstalled");
} else {
  // Not `npm ci`: the lockfile holds no entries for other platforms' optional binaries (the
  // registry answers without them), which npm ci rejects as "out of sync"; npm install installs
  // exactly the locked versions all the same, and leaves the lockfile as it is.
  npm("install", "--ignore-scripts", "--no-audit", "--no-fund");
  // The one install script we need: opencode-ai's copies its platform package's binary into
  // place (no download). The others stay off.
  npm("rebuild", "opencode-ai");
  writeFileSync(stamp, hash);
}
