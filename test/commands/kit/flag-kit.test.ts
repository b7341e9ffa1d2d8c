import { describe, expect, expectTypeOf, it } from "vitest";
import { Command } from "../../../src/commands/kit/commander.js";
import {
  addFlags,
  choiceFlag,
  countFlag,
  listFlag,
  negatedFlag,
  positiveFlag,
  switchFlag,
  textFlag,
  type FlagValues,
} from "../../../src/commands/kit/flag-kit.js";

const flags = {
  dryRun: switchFlag("--dry-run", "send nothing"),
  fsWatch: negatedFlag("--no-fs-watch", "no file watcher"),
  root: textFlag("--root <dir>", "the root"),
  host: textFlag("--host <host>", "where", "127.0.0.1"),
  ignore: listFlag("--ignore <glob>", "left out"),
  logFormat: choiceFlag("--log-format <format>", "how", ["text", "json"], "text"),
  timeout: countFlag("--timeout <ms>", "silence", 60_000).withOlderName(countFlag("--flush-timeout <ms>", "the older name")),
  n: positiveFlag("-n <count>", "how many", 20),
  at: countFlag("--at <version>", "the version").required(),
};

function parse(...args: string[]): FlagValues<typeof flags> {
  const command = addFlags(new Command("t").exitOverride().configureOutput({ outputError: () => {} }), flags);
  command.parse(args, { from: "user" });
  return command.opts();
}

describe("flags declared once", () => {
  it("gives each flag's value under its key, defaults included, with the type declared", () => {
    const values = parse("--at", "3", "--ignore", "a", "--ignore", "b", "--no-fs-watch");
    expect(values).toEqual({ at: 3, ignore: ["a", "b"], fsWatch: false, host: "127.0.0.1", logFormat: "text", timeout: 60_000, n: 20 });
    expectTypeOf(values).toEqualTypeOf<{
      dryRun?: true;
      fsWatch: boolean;
      root?: string;
      host: string;
      ignore?: string[];
      logFormat: "text" | "json";
      timeout: number;
      n: number;
      at: number;
    }>();
  });

  it("stores an older name as the flag it was, hidden from help; the last one given counts", () => {
    expect(parse("--at", "1", "--flush-timeout", "300").timeout).toBe(300);
    expect(parse("--at", "1", "--timeout", "5", "--flush-timeout", "300").timeout).toBe(300);
    expect(parse("--at", "1", "--flush-timeout", "300", "--timeout", "5").timeout).toBe(5);
    const help = addFlags(new Command("t"), flags).helpInformation();
    expect(help).toContain("--timeout <ms>");
    expect(help).not.toContain("--flush-timeout");
  });

  it("refuses a value its parser refuses, naming the flag, and a required flag not given", () => {
    expect(() => parse("--at", "1", "-n", "0")).toThrow(/-n/);
    expect(() => parse("--at", "x")).toThrow(/--at/);
    expect(() => parse()).toThrow(/--at/);
  });

  it("refuses a key that is not where commander stores its flag (the command would read undefined)", () => {
    expect(() => addFlags(new Command("t"), { dryrun: switchFlag("--dry-run") })).toThrow(
      /--dry-run is declared as dryrun, stored as dryRun/,
    );
  });
});
