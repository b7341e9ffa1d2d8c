#!/usr/bin/env node
// The many-writers simulation (test/reconcile/simulation.test.ts) on more seeds than npm test runs:
//   npm run sim -- --seeds 20000 [--first 1] [--scale 4]
//   npm run sim -- --seed 1234            (replays one seed, with its trace)
// A failing seed is printed with the command that replays it exactly.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "20000" },
    first: { type: "string", default: "1" },
    scale: { type: "string", default: "1" },
    seed: { type: "string" },
  },
});
for (const [name, value] of Object.entries(values)) {
  if (value !== undefined && !/^\d+(\.\d+)?$/.test(value)) {
    console.error(`--${name} must be a number, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
}

const env = { ...process.env, SIM_FIRST: values.first, SIM_SEEDS: values.seeds, SIM_SCALE: values.scale };
if (values.seed !== undefined) env.SIM_SEED = values.seed;
const filter = values.seed === undefined ? "holds on seeds" : "replays seed";
console.log(
  values.seed === undefined
    ? `simulating seeds ${values.first} to ${Number(values.first) + Number(values.seeds) - 1} (scale ${values.scale})`
    : `replaying seed ${values.seed}`,
);
const started = Date.now();
const run = spawnSync("npx", ["vitest", "run", "test/reconcile/simulation.test.ts", "-t", filter], { cwd: repo, env, stdio: "inherit" });
console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(run.status ?? 1);
