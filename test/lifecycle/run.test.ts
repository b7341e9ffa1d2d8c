import { describe, expect, it } from "vitest";
import { agentForCommand, commandName, missingStreamFlags, printsNoFileEvents } from "../../src/agents/commands.js";
import { runExitCode } from "../../src/lifecycle/run.js";

describe("agentForCommand", () => {
  it("should pick the stream format from the command's basename", () => {
    const table: [string, string][] = [
      ["claude", "claude"],
      ["/usr/local/bin/claude", "claude"],
      ["codex", "codex"],
      ["gemini", "gemini"],
      ["opencode", "opencode"],
      ["qwen", "qwen"],
      ["cursor-agent", "cursor"],
      ["amp", "amp"],
      ["acai", "acai"],
      ["kimi", "kimi"],
      ["copilot", "copilot"],
      ["droid", "droid"],
      ["kilo", "opencode"],
      ["/opt/bin/kilocode", "opencode"],
      ["auggie", "auto"],
      ["cn", "auto"],
      ["crush", "auto"],
      ["C:\\tools\\claude.exe".replaceAll("\\", "/"), "claude"],
      ["node", "auto"],
      ["./my-agent.sh", "auto"],
    ];
    for (const [command, format] of table) expect(agentForCommand(command), command).toBe(format);
  });

  it("should strip Windows and script extensions from the name", () => {
    expect(commandName("claude.cmd")).toBe("claude");
    expect(commandName("/x/kimi.exe")).toBe("kimi");
  });
});

describe("missingStreamFlags", () => {
  it("should say nothing when each agent has its stream flags", () => {
    const started: [string, string[]][] = [
      ["claude", ["-p", "--output-format", "stream-json", "--verbose", "fix it"]],
      ["claude", ["--print", "--verbose", "--output-format=stream-json", "fix it"]],
      ["codex", ["exec", "--json", "add tests"]],
      ["codex", ["--model", "o4", "e", "--json", "x"]],
      ["gemini", ["-p", "x", "--output-format", "stream-json"]],
      ["gemini", ["-o", "stream-json", "-p", "x"]],
      ["qwen", ["-p", "x", "--output-format", "stream-json"]],
      ["cursor-agent", ["-p", "x", "--output-format", "stream-json"]],
      ["kimi", ["--print", "--output-format", "stream-json", "-c", "x"]],
      ["opencode", ["run", "--format", "json", "x"]],
      ["amp", ["--execute", "x", "--stream-json"]],
      ["acai", ["instruct", "--streaming-json", "-p", "x"]],
      ["copilot", ["-p", "x", "--allow-all-tools", "--output-format", "json"]],
      ["copilot", ["--prompt", "x", "--output-format=json"]],
      ["droid", ["exec", "-o", "stream-json", "x"]],
      ["droid", ["exec", "--output-format", "stream-json", "--auto", "high", "x"]],
      ["kilo", ["run", "--format", "json", "x"]],
      ["auggie", ["--print", "x"]],
      ["node", ["agent.mjs"]],
    ];
    for (const [command, args] of started) expect(missingStreamFlags(command, args), `${command} ${args.join(" ")}`).toBeUndefined();
  });

  it("should name the whole flag set when one is missing or has the wrong value", () => {
    expect(missingStreamFlags("claude", ["-p", "--output-format", "stream-json", "x"])).toBe("-p --output-format stream-json --verbose");
    expect(missingStreamFlags("claude", ["-p", "--output-format", "json", "--verbose"])).toBe("-p --output-format stream-json --verbose");
    expect(missingStreamFlags("claude", [])).toBe("-p --output-format stream-json --verbose");
    expect(missingStreamFlags("codex", ["exec", "x"])).toBe("exec --json");
    expect(missingStreamFlags("codex", ["--json"])).toBe("exec --json");
    expect(missingStreamFlags("gemini", ["-p", "x"])).toBe("--output-format stream-json");
    expect(missingStreamFlags("qwen", ["-o", "text"])).toBe("--output-format stream-json");
    expect(missingStreamFlags("cursor-agent", ["--output-format", "stream-json"])).toBe("-p --output-format stream-json");
    expect(missingStreamFlags("kimi", ["--output-format", "stream-json"])).toBe("--print --output-format stream-json");
    expect(missingStreamFlags("opencode", ["run", "x"])).toBe("run --format json");
    expect(missingStreamFlags("amp", ["--execute", "x"])).toBe("--execute --stream-json");
    expect(missingStreamFlags("acai", ["instruct"])).toBe("instruct --streaming-json");
    expect(missingStreamFlags("copilot", ["-p", "x", "--output-format", "text"])).toBe("-p --output-format json");
    expect(missingStreamFlags("droid", ["exec", "x"])).toBe("exec --output-format stream-json");
    expect(missingStreamFlags("droid", ["-o", "stream-json", "x"])).toBe("exec --output-format stream-json");
    expect(missingStreamFlags("kilo", ["run", "x"])).toBe("run --format json");
    expect(missingStreamFlags("kilocode", ["--format", "json"])).toBe("run --format json");
  });
});

describe("printsNoFileEvents", () => {
  it("should name Continue, Auggie and Crush, whose output names no file, and no agent with a stream", () => {
    for (const command of ["cn", "/usr/local/bin/auggie", "crush", "auggie.cmd"]) expect(printsNoFileEvents(command), command).toBe(true);
    for (const command of ["claude", "copilot", "droid", "kilo", "node"]) expect(printsNoFileEvents(command), command).toBe(false);
  });
});

describe("runExitCode", () => {
  it("should pass on the agent's failure, 128+n for signal n, else the sync's code", () => {
    expect(runExitCode({ code: 0, signal: null }, 0)).toBe(0);
    expect(runExitCode({ code: 0, signal: null }, 1)).toBe(1);
    expect(runExitCode({ code: 3, signal: null }, 1)).toBe(3);
    expect(runExitCode({ code: null, signal: "SIGINT" }, 0)).toBe(130);
    expect(runExitCode({ code: null, signal: "SIGTERM" }, 1)).toBe(143);
    expect(runExitCode({ code: null, signal: "SIGHUP" }, 0)).toBe(129);
  });
});
