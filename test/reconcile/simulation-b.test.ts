import { describe, it } from "vitest";
import { holdsOnSeeds, timeoutFor } from "./sim/seeds.js";

/**
 * The second half of npm test's seeds of the many-writers simulation (simulation.test.ts has the
 * first, the seeds found before and the replay): a file of its own, so that vitest runs both in
 * parallel workers. Skipped when `npm run sim` (or SIM_SEED) picks the seeds.
 */

const FIRST = 1001;
const SEEDS = 1000;
const PICKED = process.env.SIM_SEED !== undefined || process.env.SIM_SEEDS !== undefined;

describe("the simulation of many writers, second half", () => {
  it.runIf(!PICKED)(`holds on seeds ${FIRST} to ${FIRST + SEEDS - 1}`, () => holdsOnSeeds(FIRST, SEEDS), timeoutFor(SEEDS));
});
