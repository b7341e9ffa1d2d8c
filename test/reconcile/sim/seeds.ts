import { expect } from "vitest";
import { runSeed, type SimResult } from "./world.js";

/** What a failing seed prints: the command that replays it exactly, its violations and its last steps. */
export function story(result: SimResult): string {
  return [
    `seed ${result.seed} failed (replay: SIM_SEED=${result.seed} npx vitest run test/reconcile/simulation.test.ts):`,
    ...result.violations,
    "--- the last steps:",
    ...result.trace,
  ].join("\n");
}

/**
 * Runs seeds `first` to `first + count - 1` (stopping at 3 failures) and expects none to fail;
 * each failure names its replay. npm test splits its seeds over files (simulation*.test.ts) that
 * vitest runs in parallel workers.
 */
export async function holdsOnSeeds(first: number, count: number, scale = 1): Promise<void> {
  const failed: SimResult[] = [];
  const total = { seeds: 0, steps: 0, commits: 0 };
  for (let seed = first; seed < first + count && failed.length < 3; seed++) {
    const result = await runSeed(seed, { scale });
    if (result.violations.length > 0) failed.push(result);
    (total.seeds++, (total.steps += result.steps), (total.commits += result.commits));
  }
  console.log(`${total.seeds} seeds: ${total.steps} steps, ${total.commits} commits acknowledged`);
  for (const f of failed) console.log(`seed ${f.seed}: ${f.violations.join("; ")}`);
  const replay = scale === 1 ? "" : ` SIM_SCALE=${scale}`;
  expect(failed.map((f) => `seed ${f.seed} (SIM_SEED=${f.seed}${replay}): ${f.violations[0]}`)).toEqual([]);
}

/** A test's timeout for `count` seeds: 400 ms each (two files at once on a loaded 2-core machine took 230), never under 2 minutes. */
export function timeoutFor(count: number, scale = 1): number {
  return Math.max(120_000, count * scale * 400);
}
