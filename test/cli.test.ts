import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram, commandsFor } from "../src/cli.js";

/**
 * A start builds only the command it runs (commandsFor): what commander prints for that command
 * must be what it prints with all of them built. test/e2e/ runs the built CLI for the rest.
 */

const all = buildProgram();
const names = all.commands.map((command) => command.name());

/** Every command under `command`, with its path of names (`serve token create`). */
function tree(command: Command, path: string[] = []): [string, Command][] {
  return command.commands.flatMap((sub) => [
    [[...path, sub.name()].join(" "), sub] as [string, Command],
    ...tree(sub, [...path, sub.name()]),
  ]);
}

describe("commandsFor", () => {
  it.each([
    [["push", "--dry-run"], ["push"]],
    [["serve", "token", "list"], ["serve"]],
    [["watch-claude"], ["watch-claude"]],
    [["-V"], []],
    [["--version", "push"], []],
  ])("should build only what %j runs", (args, expected) => {
    expect(commandsFor(args)).toEqual(expected);
  });

  it.each([[[]], [["--help"]], [["-h", "push"]], [["help", "push"]], [["completion", "bash"]], [["pusj"]], [["--root", "x", "push"]]])(
    "should build every command for %j",
    (args) => {
      expect(commandsFor(args)).toEqual(names);
    },
  );
});

describe("buildProgram with one command", () => {
  it.each(names)("should give %s and its subcommands the help they have among all commands", (name) => {
    const under = ([path]: [string, Command]) => path.split(" ")[0] === name;
    const alone = new Map(tree(buildProgram(commandsFor([name]))).filter(under));
    const among = tree(all).filter(under);
    expect([...alone.keys()]).toEqual(among.map(([path]) => path));
    for (const [path, command] of among) expect(alone.get(path)!.helpInformation(), path).toBe(command.helpInformation());
  });
});

describe("the program's help", () => {
  it("lists every command, those within a command too, under its whole name", () => {
    const help = all.helpInformation();
    const paths = tree(all)
      .map(([path]) => path)
      .filter((path) => !/(^| )help$/.test(path) || path === "help");
    expect(paths).toContain("serve token create");
    expect(paths).toContain("projects create");
    for (const path of paths) expect(help, path).toMatch(new RegExp(`^  ${path}( |$)`, "m"));
  });

  it("keeps a command's own help to its own commands, under their own names", () => {
    const serve = all.commands.find((command) => command.name() === "serve")!;
    expect(serve.helpInformation()).toMatch(/^  token /m);
    expect(serve.helpInformation()).not.toMatch(/^  serve token/m);
  });
});
