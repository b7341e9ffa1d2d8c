import { describe, expect, it } from "vitest";
import { timeoutFor } from "./sim/seeds.js";
import { runSeed, type SimResult } from "./sim/world.js";

/**
 * The seeded simulation with a server restored from a backup taken halfway through the edits
 * (sim/rewind.ts): every writer that synced past the backup refuses it, changes nothing, takes the
 * way out (uspark push --onto-rewound), and no version a writer held is lost. A failing seed
 * replays with `SIM_SEED=n npx vitest run test/reconcile/rewind-simulation.test.ts`.
 */

const SEEDS = Number(process.env.SIM_REWIND_SEEDS ?? 300);
const ONE = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);

function story(result: SimResult): string {
  return [`seed ${result.seed} failed:`, ...result.violations, "--- the last steps:", ...result.trace].join("\n");
}

describe("the simulation with a server restored from a backup", () => {
  it.runIf(ONE !== undefined)(`replays seed ${ONE}`, async () => {
    const result = await runSeed(ONE!, { trace: true, rewind: true });
    if (result.violations.length > 0) console.log(story(result));
    expect(result.violations).toEqual([]);
  });

  it.runIf(ONE === undefined)(
    `holds on seeds 1 to ${SEEDS}`,
    async () => {
      const failed: SimResult[] = [];
      for (let seed = 1; seed <= SEEDS && failed.length < 3; seed++) {
        const result = await runSeed(seed, { rewind: true });
        if (result.violations.length > 0) failed.push(result);
      }
      expect(failed.map((f) => `seed ${f.seed} (SIM_SEED=${f.seed}): ${f.violations[0]}`)).toEqual([]);
    },
    timeoutFor(SEEDS * 2),
  );
});
