import { describe, expect, it } from "vitest";
import { eventually } from "./wait.js";

describe("eventually, the kit's one bounded wait", () => {
  it("gives the first truthy value, asking again after a falsy one or a throw", async () => {
    let asked = 0;
    const value = await eventually(() => {
      asked++;
      if (asked === 1) throw new Error("not listening yet");
      return asked >= 3 ? `ready after ${asked}` : 0;
    }, 5000);
    expect(value).toBe("ready after 3");
  });

  it("fails after its bound, naming what it waited for and the last error", async () => {
    const started = Date.now();
    await expect(eventually(() => Promise.reject(new Error("ECONNREFUSED")), 200, "the server")).rejects.toThrow(
      /timed out after 200 ms waiting for the server; last error: ECONNREFUSED/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });
});
