// Small measuring helpers for bench/run.mjs: wall time of shell pipelines, peak RSS, first byte.
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

/** Quotes a path or argument for sh. */
export function sh(text) {
  return `'${String(text).replaceAll("'", `'\\''`)}'`;
}

/** Runs `command` with sh; resolves with its wall time in seconds. Rejects unless it exits 0. */
export function timeShell(command, { env } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("sh", ["-c", command], { stdio: ["ignore", "ignore", "pipe"], env: env ?? process.env });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      if (code === 0) resolve(seconds);
      else reject(new Error(`${command}\nexited with ${code ?? signal}${stderr ? `:\n${stderr.slice(-2000)}` : ""}`));
    });
  });
}

/**
 * Runs `command` (sh) whose node process preloads peak-rss.mjs; resolves with that process's
 * peak RSS in bytes and the wall time.
 */
export async function peakRss(command, rssFile) {
  rmSync(rssFile, { force: true });
  const seconds = await timeShell(command, { env: { ...process.env, USPARK_BENCH_RSS_FILE: rssFile } });
  const bytes = Number(readFileSync(rssFile, "utf8"));
  rmSync(rssFile, { force: true });
  return { bytes, seconds };
}

/**
 * Starts `args` (a node script and its arguments), writes `input` to its stdin at once and
 * resolves with the milliseconds from the spawn to its first stdout byte; then closes stdin and
 * waits for the exit.
 */
export function firstByte(args, input, { env } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"], env: env ?? process.env });
    let ms;
    child.stdout.once("data", () => {
      ms = performance.now() - started;
      child.stdin.end();
    });
    child.stdout.resume();
    child.stdin.on("error", () => {});
    child.stdin.write(input);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (ms === undefined) reject(new Error(`${args.join(" ")} exited (${code ?? signal}) before writing anything`));
      else resolve(ms);
    });
  });
}

/**
 * Milliseconds from the spawn of `args` (a node script and its arguments, or `-e ''`) to its exit.
 * Rejects unless it exits 0, with the end of its stderr.
 */
export function untilExit(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`${args.join(" ")}\nexited with ${code ?? signal}${stderr ? `:\n${stderr.slice(-2000)}` : ""}`));
    });
  });
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const MiB = 1024 * 1024;

/** Makes project `id` on the reference server at `url` (API v1.2: projects exist or not; an older CLI under --bin cannot make one). */
export async function createProject(url, id) {
  const res = await fetch(`${url}/api/projects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id }),
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`creating project ${id} answered ${res.status}: ${await res.text()}`);
}
