import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { GENERATED_PAGES, markdownTable, replaceGenerated } from "../src/docs/generated.js";

/**
 * The tables of docs/ made from the code's lists (src/docs/generated.ts) are what the lists make
 * today: a code or an event added, renamed or described anew without `npm run docs:generate` fails here.
 */

const repo = fileURLToPath(new URL("../", import.meta.url));

describe("generated tables of docs/", () => {
  for (const [page, generate] of Object.entries(GENERATED_PAGES)) {
    it(`${page} holds what its lists make (npm run docs:generate)`, () => {
      const doc = readFileSync(repo + page, "utf8");
      expect(generate(doc)).toBe(doc);
    });
  }

  it("replaces only what stands between a table's markers, and refuses a page without them", () => {
    const doc = "intro\n<!-- generated: t (npm run docs:generate) -->\nold\n<!-- end generated: t -->\nafter\n";
    expect(replaceGenerated(doc, "t", markdownTable(["a", "b"], [["x|y", "z"]]))).toBe(
      "intro\n<!-- generated: t (npm run docs:generate) -->\n| a | b |\n| --- | --- |\n| x\\|y | z |\n<!-- end generated: t -->\nafter\n",
    );
    expect(() => replaceGenerated("no markers", "t", "")).toThrow(/no "<!-- generated: t/);
  });
});
