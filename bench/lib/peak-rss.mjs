// Preloaded (`node --import`) into a process whose peak memory the bench measures: on exit it
// writes its peak resident set size in bytes to $USPARK_BENCH_RSS_FILE. Nothing else: the process
// runs as it would without it.
//
// Linux's VmHWM, not getrusage's ru_maxrss: ru_maxrss survives execve, so a child spawned by a
// large parent (a test worker holding the input) reports the parent's size at the fork as its own.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.env.USPARK_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(peakRss())));

function peakRss() {
  try {
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (kib) return Number(kib[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}
