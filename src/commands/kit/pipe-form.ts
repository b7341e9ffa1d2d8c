import { isatty } from "node:tty";
import { startEarlyCopy } from "../../stream/early-copy.js";
import { agentStdin } from "../../stream/stdin.js";

/** `uspark watch` and `watch-claude` read an agent's stream from stdin unless --no-stdin is given. */
export function isPipeForm(args: readonly string[]): boolean {
  return (args[0] === "watch" || args[0] === "watch-claude") && !args.includes("--no-stdin");
}

/**
 * Called by bin/uspark.js before the rest of the CLI loads: starts copying stdin to stdout when
 * this run is the pipe form reading a pipe or a file (the session adopts the copy). Not for a
 * help request (its text goes to stdout) nor a terminal.
 */
export function startPipeFormCopy(argv: readonly string[]): void {
  const args = argv.slice(2);
  if (!isPipeForm(args) || args.includes("--help") || args.includes("-h") || isatty(0)) return;
  startEarlyCopy(agentStdin(), process.stdout);
}
