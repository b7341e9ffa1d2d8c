import { describe, expect, it } from "vitest";
import { Breath } from "../src/util/breath.js";

/** Has the event loop turned (a macrotask run) since this was called? */
function turnWatch(): () => boolean {
  let turned = false;
  setImmediate(() => (turned = true));
  return () => turned;
}

describe("Breath", () => {
  it("resolves without letting the event loop turn while its time is not up", async () => {
    const breath = new Breath(60_000);
    const turned = turnWatch();
    for (let i = 0; i < 100; i++) await breath.take();
    expect(turned()).toBe(false);
  });

  it("lets the event loop turn once its time is up, then counts again from there", async () => {
    const breath = new Breath(0);
    const turned = turnWatch();
    await breath.take();
    expect(turned()).toBe(true);
    const again = turnWatch();
    await breath.take();
    expect(again()).toBe(true);
  });
});
