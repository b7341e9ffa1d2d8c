import { describe, expect, it } from "vitest";
import { isPipeForm } from "../../../src/commands/kit/pipe-form.js";

describe("isPipeForm", () => {
  it.each([
    [["watch"], true],
    [["watch-claude", "--project-id", "p"], true],
    [["watch", "--no-stdin"], false],
    [["run", "--", "claude"], false],
    [["push"], false],
  ])("%j: %s", (args, expected) => {
    expect(isPipeForm(args)).toBe(expected);
  });
});
