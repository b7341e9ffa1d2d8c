/**
 * The command line: the program, its root help, the registry of its commands (each one's flags,
 * help, examples and run are in commands/<name>.ts) and `main`, which builds the commands argv
 * names, runs the one it names and turns its errors into exit codes.
 */
import { readFileSync } from "node:fs";
import { DEFAULT_API_URL, UsageError } from "./config/config.js";
import { EXIT } from "./util/exit-codes.js";
import { Reporter } from "./report/reporter.js";
import { isPipeForm } from "./commands/kit/pipe-form.js";
import { Command, CommanderError, Help } from "./commands/kit/commander.js";
import { checkWorkingDirectory, copyStdinThrough, exit, usageFailure } from "./commands/kit/exit.js";
import { addCatCommand } from "./commands/cat.js";
import { addCompletionCommand } from "./commands/completion.js";
import { addDiffCommand } from "./commands/diff.js";
import { addLogCommand } from "./commands/log.js";
import { addLoginCommand } from "./commands/login.js";
import { addLogoutCommand } from "./commands/logout.js";
import { addLsCommand } from "./commands/ls.js";
import { addProjectsCommands } from "./commands/projects.js";
import { addPullCommand } from "./commands/pull.js";
import { addPushCommand } from "./commands/push.js";
import { addResolveCommand } from "./commands/resolve.js";
import { addRestoreCommand } from "./commands/restore.js";
import { addRunCommand } from "./commands/run.js";
import { addServeCommands } from "./commands/serve.js";
import { addStatusCommand } from "./commands/status.js";
import { addWatchClaudeCommand } from "./commands/watch-claude.js";
import { addWatchCommand } from "./commands/watch.js";

const EXAMPLES = `
Examples:
  $ claude -p --output-format stream-json --verbose "fix the login bug" | uspark watch-claude --project-id my-app
  $ codex exec --json "add tests" | uspark watch --project-id my-app
  $ uspark watch-claude --dry-run < session.jsonl          # what would be pushed, nothing sent
  $ uspark run --project-id my-app -- claude -p --output-format stream-json --verbose "fix the login bug"
  $ uspark watch --no-stdin --project-id my-app              # no agent stream: sync the tree until a signal
  $ uspark push --pending --project-id my-app                # retry what an earlier run could not sync
  $ uspark pull --project-id my-app                          # the remote project onto the disk
  $ uspark status --project-id my-app                        # what is not in sync (exit 1 if anything)
  $ uspark log -n 5 --project-id my-app                      # the last commits: who changed what
  $ uspark serve --data ./uspark-data                        # a local reference server on port 4400
  $ uspark login --api-url https://uspark.example.com         # a token through the server's web view, saved for it

Settings: --api-url / USPARK_API_URL (default ${DEFAULT_API_URL}), --token / USPARK_TOKEN,
--project-id / USPARK_PROJECT_ID, then what the root remembers of its last pull or sync (api url,
project id, prefix), then ~/.uspark/config.json (the token uspark login saved for the server, or
{ "token": "...", "apiUrl": "..." }). A server the root remembers is used only if chosen on this
machine (named by --api-url or USPARK_API_URL, recorded in ~/.uspark/known-servers; apiUrl or
servers of the config; uspark login): any other stops the command, nothing sent. The root is
--root, else the nearest directory upward holding .uspark/state.json (never $HOME), else the
current directory: in a pulled tree, uspark push and uspark pull need no flags, from any
subdirectory. Shell completion: uspark completion bash|zsh|fish.
Exit codes: 0 everything synced, 1 something not synced (listed and journaled in
<root>/.uspark/pending.json), 2 usage or configuration error, ${EXIT.outputError} writing stdout or stderr
failed (not a closed pipe), 127 run: agent command not found; run passes on the agent's own
non-zero code (128+n when signal n ended it).`;

/** Each top-level command's builder, in the order `uspark --help` lists them. */
const COMMANDS: readonly (readonly [name: string, add: (program: Command) => void])[] = [
  ["watch-claude", addWatchClaudeCommand],
  ["watch", addWatchCommand],
  ["run", addRunCommand],
  ["push", addPushCommand],
  ["pull", addPullCommand],
  ["resolve", addResolveCommand],
  ["projects", addProjectsCommands],
  ["status", addStatusCommand],
  ["diff", addDiffCommand],
  ["log", addLogCommand],
  ["ls", addLsCommand],
  ["cat", addCatCommand],
  ["restore", addRestoreCommand],
  ["login", addLoginCommand],
  ["logout", addLogoutCommand],
  ["serve", addServeCommands],
  ["completion", addCompletionCommand],
];

/**
 * The commands that `args` (argv without node and the script) needs built: only the one it names
 * first, as building all some 30 commands and their options cost every start about 12 M
 * instructions (measured: a push of one file 376 -> 364 M), and none for -V (commander prints the
 * version when it meets the flag). Anything else needs all of them: no command or another flag
 * first (the program's help lists them all), `help`, `completion` (made from them all), a name
 * commander must call unknown and suggest a known one for.
 */
export function commandsFor(args: readonly string[]): readonly string[] {
  const first = args[0];
  if (first === "-V" || first === "--version") return [];
  const names = COMMANDS.map(([name]) => name);
  return first !== undefined && first !== "completion" && names.includes(first) ? [first] : names;
}

/** The program with the given commands (default: all); its help, version and error output. */
export function buildProgram(names: readonly string[] = commandsFor([])): Command {
  const program = new Command("uspark")
    .description(
      "Keep a remote uSpark project in sync with the files an AI coding agent edits.\nstdin is copied to stdout unchanged; the tool's own words go to stderr.",
    )
    .version(packageVersion(), "-V, --version")
    .addHelpText("after", EXAMPLES)
    .configureOutput({ outputError: (text) => reportCommanderError(text) })
    .exitOverride();
  for (const [name, add] of COMMANDS) if (names.includes(name)) add(program);
  listEveryCommand(program);
  return program;
}

/**
 * The program's help lists every command, those within a command too (`projects create`,
 * `serve token list`), each under its whole name. Set after the commands are added, so that their
 * own help (which commander copies the settings into) lists only theirs.
 */
function listEveryCommand(program: Command): void {
  const help = new Help();
  const nested = (command: Command): Command[] =>
    help
      .visibleCommands(command)
      .filter((sub) => sub.name() !== "help")
      .flatMap((sub) => [sub, ...nested(sub)]);
  const pathOf = (command: Command): string[] =>
    command.parent && command.parent !== program ? [...pathOf(command.parent), command.parent.name()] : [];
  program.configureHelp({
    visibleCommands: (command) => help.visibleCommands(command).flatMap((sub) => [sub, ...(sub.name() === "help" ? [] : nested(sub))]),
    subcommandTerm: (command) => [...pathOf(command), help.subcommandTerm(command)].join(" "),
  });
}

/** Commander's own complaints (unknown flag, missing argument), as one line through the reporter. */
function reportCommanderError(text: string): void {
  const message = text
    .trim()
    .replace(/^error: /, "")
    .replace(/\s*\n\s*/g, " ");
  new Reporter().error("usage", `${message} (run with --help for usage)`);
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram(commandsFor(argv.slice(2)));
  try {
    checkWorkingDirectory();
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; everything else commander rejects is a usage error.
      if (error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version") return exit(EXIT.ok);
      // The pipe form passes the agent's stream on even so (said already by reportCommanderError).
      if (isPipeForm(argv.slice(2))) await copyStdinThrough();
      exit(EXIT.usage);
      return;
    }
    if (error instanceof UsageError) return usageFailure(new Reporter(), error);
    new Reporter().internalError(error);
    exit(EXIT.internal);
  }
}
