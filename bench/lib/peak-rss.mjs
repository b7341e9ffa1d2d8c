// Preloaded (`node --import`) into a process whose peak memory the bench measures: on exit it
// writes its peak resident set size in bytes (getrusage's ru_maxrss) to $USPARK_BENCH_RSS_FILE.
// Nothing else: the process runs as it would without it.
import { writeFileSync } from "node:fs";

const file = process.env.USPARK_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
