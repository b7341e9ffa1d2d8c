import { describe, expect, it } from "vitest";
import { cutToWidth, textWidth, shellWord } from "../../src/terminal/terminal-text.js";

describe("text cut to a terminal's width", () => {
  it("counts wide characters as two columns and combining marks as none", () => {
    expect(textWidth("日本")).toBe(4);
    expect(textWidth("e\u0301")).toBe(1);
    expect(cutToWidth("日本語のテキスト", 9)).toBe("日本語の…");
  });

  it("leaves what fits alone, and cuts exactly to the width with the ellipsis", () => {
    expect(cutToWidth("short", 9)).toBe("short");
    expect(cutToWidth("exactly9!", 9)).toBe("exactly9!");
    expect(cutToWidth("ten chars!", 9)).toBe("ten char…");
  });
});

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
