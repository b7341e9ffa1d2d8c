// A slow consumer of stdin: reads at most --mibps MiB per second (default 100) and throws it
// away, so that whatever writes into the pipe meets backpressure.
//
//   producer | node bench/lib/slow-reader.mjs [--mibps 100]

const i = process.argv.indexOf("--mibps");
const mibps = i === -1 ? 100 : Number(process.argv[i + 1]);
const TICK_MS = 5;
const perTick = Math.max(1, Math.round((mibps * 1024 * 1024 * TICK_MS) / 1000));

let budget = perTick;
process.stdin.on("data", (chunk) => {
  budget -= chunk.length;
  if (budget > 0) return;
  process.stdin.pause();
  setTimeout(() => {
    budget += perTick;
    process.stdin.resume();
  }, TICK_MS);
});
