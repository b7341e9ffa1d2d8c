import { describe, expect, it } from "vitest";
import { shellWord } from "../../src/lifecycle/history.js";

// The commands a hint names (`uspark cat PATH --at N`) must paste into a shell as they are.
describe("shellWord", () => {
  it.each([
    ["src/b.ts", "src/b.ts"],
    ["dir/@scope/x-1_2.ts", "dir/@scope/x-1_2.ts"],
    ["a b.txt", "'a b.txt'"],
    ["it's.txt", "'it'\\''s.txt'"],
    ["$HOME.txt", "'$HOME.txt'"],
    ["*.ts", "'*.ts'"],
  ])("%s is written %s", (word, written) => {
    expect(shellWord(word)).toBe(written);
  });
});
