/**
 * The command line: each command with its flags, help and examples (commander), and `main`,
 * which builds the command argv names and runs it. What a command does is in cli/commands.ts
 * and the modules it loads when it runs.
 */
import { readFileSync } from "node:fs";
import type * as Commander from "commander";
import { agentNames } from "./agents/index.js";
import { DEFAULT_API_URL, parseNonNegativeInt, parsePositiveInt, UsageError } from "./config/config.js";
import { EXIT } from "./util/exit-codes.js";
import { MASS_DELETE_TEXT } from "./reconcile/mass-delete.js";
import { Reporter } from "./report/reporter.js";
import { requireCjs } from "./util/cjs.js";
import { DEFAULTS } from "./watcher/watcher.js";
import { isPipeForm } from "./cli/pipe-form.js";
import { checkWorkingDirectory, copyStdinThrough, exit, printToStdout, runCatCommand, runDiffCommand, runLogCommand, runLsCommand, runProjectsCommand, runProjectsCreateCommand, runPullCommand, runPushCommand, runResolveCommand, runRestoreCommand, runRunCommand, runServeCommand, runStatusCommand, runWatchCommand, usageFailure } from "./cli/commands.js";
import { completionCommands, completionScript, SHELLS, type Shell } from "./cli/completion.js";
import type { DiffFlags, HistoryFlags, ProjectsFlags, PullFlags, PushFlags, ResolveFlags, RunFlags, LoginFlags, ServeFlags, StatusFlags, StoreFlags, TokenCreateFlags, WatchFlags } from "./cli/flags.js";

const { Argument, Command, CommanderError, Help, Option } = requireCjs("commander") as typeof Commander;
type Command = Commander.Command;

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

const WATCH_EXAMPLES = `
Examples:
  $ claude -p --output-format stream-json --verbose "fix the login bug" | uspark watch-claude --project-id my-app
  $ gemini --output-format stream-json -p "add tests" | uspark watch --project-id my-app --ignore "*.log"
  $ uspark watch-claude --dry-run --root ~/src/my-app < session.jsonl
stdout is stdin, unchanged; progress, warnings and the summary go to stderr.`;

const CONFLICTS_HELP = `
Conflicts: a file changed here and remotely since the last sync (or, with no sync yet, a file that
differs on both sides and that git does not report clean) keeps both versions: the remote one stays
at its path, yours stays here and a command that writes (push, watch, run; never pull) commits
it next to it as <name>.conflict-<YYYYMMDD-HHMMSS>-<host>-<sha6>.<ext>; it is said once and the
exit code is 1. Resolve it with \`uspark resolve <path> --mine | --theirs | --both\`, which removes
the copy on every machine (or \`uspark push --force <path>\` / \`uspark pull --force <path>\`, which
leave the copy).`;

const RESOLVE_HELP = `
--mine commits yours over the remote's version as it is now; --theirs writes the remote's version
here (yours kept in .uspark/backup/<time>/ first); each deletes the conflict copy remotely, so
every other machine loses it at its next pull or two-way watch (a copy someone edited since is
kept, and said). --both takes the remote's version at the path and keeps yours as a file of its
own, the copy. Exit 0 resolved, 1 not (the remote moved meanwhile: look again), 2 no conflict there.

Examples:
  $ uspark status                          # the open conflicts, with their copies
  $ uspark diff --remote src/app.ts        # yours, then the remote's
  $ uspark resolve src/app.ts --mine`;

const PULL_HELP = `
Writes the remote's changes over files that did not change here since the last sync, and deletes
here what the remote deleted (only files the last sync held). Your own changes are left alone
(push sends them). Paths that would land outside the root, in .git/ or .uspark/, or through a
symlink are refused (exit 1). Deletes of most of what was last synced (more than ${MASS_DELETE_TEXT})
are refused (exit 1) and stay refused until --force: a remote that suddenly looks empty is more
often a wrong project or prefix.
${CONFLICTS_HELP}

Examples:
  $ uspark pull --project-id my-app                  # the remote project into the current directory
  $ uspark pull --project-id my-app --dry-run        # what would change; nothing written
  $ uspark pull --force src/app.ts                   # a conflict: take theirs (yours kept in .uspark/backup/)
  $ cd src && uspark pull                            # in a pulled tree: the whole project, at its root
  $ uspark pull --project-id my-app --prefix vendor/app --ignore "*.log"
  $ uspark pull --timeout 10000                      # give up after 10 s without an answer (as every command)`;

const PROJECTS_HELP = `
A project exists once it is created: a push, pull or watch of an id the server does not know is an
error (exit 2) that names the closest known ids, unless --create is given. (Servers older than API
1.2 create a project on its first commit, and cannot list them.)

Examples:
  $ uspark projects                                  # id, version, files, last change
  $ uspark projects create my-app
  $ uspark push --project-id my-app --create         # create it if need be, then push`;

const PUSH_HELP = `
Commits what changed here since the last sync, each change on condition that the remote still
holds what this machine last saw (so another writer's newer edit is never overwritten), and
deletes remotely what was deleted here (only files the last sync held; most of the project only
with --force, and then nothing at all is committed without it). Remote changes are left alone
(pull takes them).
${CONFLICTS_HELP}

Examples:
  $ uspark push --project-id my-app                  # everything that changed under the root
  $ uspark push src/ README.md                       # only these (relative to the current directory)
  $ uspark push --dry-run                            # what would be sent; nothing sent
  $ uspark push --force src/app.ts                   # a conflict: yours wins
  $ uspark push --pending                            # retry what an earlier run journaled
  $ cd src && uspark push                            # in a pulled tree: its root, project and server`;

const SERVE_HELP = `
Projects exist once created (\`uspark projects create <id>\`, or POST /api/projects); any route of
another id answers 404.

The server answers only requests addressed to localhost, 127.0.0.1, [::1] or the address it is
bound to, on any port (others get 421: a web page cannot reach it through a DNS name it rebinds),
and refuses a browser's cross-site request that would change something (403). Behind a proxy, or
under another name, give the URL people use: --public-url https://uspark.example.com (and
--allowed-host for more names, such as the one a proxy puts in Host if it sets its own).

The web view is at the address it prints: projects, files, commits as diffs, and agent sessions
live; sign in with a token (a server started without one needs none).

Examples:
  $ uspark serve                                      # on 127.0.0.1:4400, no token, data in ~/.uspark/serve-data
  $ uspark serve --data ./uspark-data                 # another directory
  $ uspark projects create my-app                     # then create a project
  $ USPARK_SERVE_TOKEN="$TOKEN" uspark serve --data /srv/uspark --host 0.0.0.0   # the admin token, kept out of ps
  $ uspark serve token create --data ./uspark-data --project my-app --scope write   # a scoped token (uspark serve token --help)
  $ uspark serve --db postgres://uspark:secret@db.internal/uspark --port 4401   # replicas may share it
  $ USPARK_SERVE_TOKEN="$TOKEN" uspark serve --data /srv/uspark --public-url https://uspark.example.com   # behind a proxy`;

const TOKEN_HELP = `
A scoped token may use only its projects: read (GET, and fetching blobs) or write (also push). The
store keeps its SHA-256 only: the secret is printed once, alone on stdout. A revoked or expired
token is refused at its next request, by every server on the store. A server started without an
admin token (loopback only) still holds a known scoped token to its scope.

Examples:
  $ uspark serve token create --data ./uspark-data --project my-app --scope write > agent.token
  $ uspark serve token create --db "$USPARK_DATABASE_URL" --project docs --project site --scope read --expires 30
  $ uspark serve token list --data ./uspark-data
  $ uspark serve token revoke --data ./uspark-data 3f9c0a1b2d4e
  $ USPARK_SERVE_TOKEN="$ADMIN" uspark serve --data ./uspark-data --host 0.0.0.0   # the admin token, not in ps`;

const LOGIN_HELP = `
login prints a code and an address on stderr (it opens nothing): open the address in a browser
signed in to the server's web view, check the code, choose the projects and the scope, approve.
login then saves the new token for that server alone in ~/.uspark/config.json (mode 0600; made
the default server if none is set). The token then goes with every request to that server, unless
--token or USPARK_TOKEN say otherwise. logout removes it from the file (uspark serve token revoke
refuses it on the server).

--project and --scope say what to ask for: the approval page ticks those projects and that access
and names this machine (its host name); the person approving may still change them.

Examples:
  $ uspark login --api-url https://uspark.example.com --project my-app --scope write
  $ uspark push --project-id my-app                  # now with the saved token
  $ uspark logout --api-url https://uspark.example.com`;

const DIFF_HELP = `
Unified diffs of the text files not in sync (a binary file: one line). Without --remote: what you
changed here since the last sync (what a push would send); with --remote: what a pull would change
here (your file, then the remote's). Nothing is written or sent.

Examples:
  $ uspark diff                                      # all your unsynced changes
  $ uspark diff src/app.ts                           # one file (relative to the current directory)
  $ uspark diff --remote                             # what uspark pull would change`;

const HISTORY_HELP = `
The remote keeps every version (API 1.2 servers): each commit raises it by one.

Examples:
  $ uspark log -n 5                                  # the last five commits: version, time, agent, session, paths
  $ uspark log src/app.ts --json                     # the commits that touched src/app.ts
  $ uspark ls --at 12                                # the files at version 12
  $ uspark cat src/app.ts --at 12 > old-app.ts       # a file's bytes at version 12
  $ uspark restore src/app.ts --at 12                # commit that content back, and write it here`;

const STATUS_HELP = `
Compares the tree, the last sync (.uspark/state.json) and the remote, changing nothing: what a push
would send, what a pull would take, open conflicts, deletes held by the mass-delete guard, and what
an earlier run journaled. Exit code: 0 everything in sync, 1 anything not (with or without --json),
2 usage. --json prints one object: { "format": 1, "projectId", "apiUrl", "root", "baseVersion",
"remoteVersion", "inSync", "paths": [{ "path", "status", "copy"? }] } (docs/commands.md#status---json).

Examples:
  $ uspark status                                    # in a pulled tree: no flags needed
  $ uspark status --short                            # two letters a path: here, remotely (UU: conflict)
  $ uspark status --json | jq '.paths[] | select(.status == "conflict")'
  $ uspark status --quiet || uspark push             # scriptable: exit 1 when not in sync`;

const RUN_EXAMPLES = `
Examples:
  $ uspark run --project-id my-app -- claude -p --output-format stream-json --verbose "fix the login bug"
  $ uspark run --project-id my-app -- codex exec --json "add tests"
  $ uspark run --project-id my-app --agent claude -- ./my-agent.sh    # a wrapper that prints Claude's stream
On a terminal, stdout shows a readable view: one line per finished tool call (✓ or ✗) and per
synced commit (↑), and at the end the agent's own result or failure reason; --raw shows the
agent's output unchanged instead. A pipe or a file always gets the agent's stdout unchanged, byte
for byte. Its stdin and stderr are yours. Signals are passed on to it. Exit code: the agent's when
it fails (128+n when signal n ended it), else the sync's.`;

const COMPLETION_HELP = `
Examples:
  $ eval "$(uspark completion bash)"                              # in ~/.bashrc
  $ source <(uspark completion zsh)                               # in ~/.zshrc
  $ uspark completion fish > ~/.config/fish/completions/uspark.fish`;

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
    .description("Keep a remote uSpark project in sync with the files an AI coding agent edits.\nstdin is copied to stdout unchanged; the tool's own words go to stderr.")
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
  const nested = (command: Command): Command[] => help.visibleCommands(command).filter((sub) => sub.name() !== "help").flatMap((sub) => [sub, ...nested(sub)]);
  const pathOf = (command: Command): string[] => (command.parent && command.parent !== program ? [...pathOf(command.parent), command.parent.name()] : []);
  program.configureHelp({
    visibleCommands: (command) => help.visibleCommands(command).flatMap((sub) => [sub, ...(sub.name() === "help" ? [] : nested(sub))]),
    subcommandTerm: (command) => [...pathOf(command), help.subcommandTerm(command)].join(" "),
  });
}

function addWatchClaudeCommand(program: Command): void {
  addWatchOptions(
    program
      .command("watch-claude")
      .description("sync the files edited in a Claude Code stream (claude -p --output-format stream-json --verbose)"),
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand({ ...flags, agent: "claude" }));
}

function addWatchCommand(program: Command): void {
  addWatchOptions(
    program
      .command("watch")
      .description("sync the files edited in any supported agent's JSON stream")
      .addOption(new Option("--agent <name>", "the agent whose stream this is").choices(["auto", ...agentNames]).default("auto"))
      .option("--no-stdin", "read no stream: watch the tree and sync until SIGINT/SIGTERM/SIGHUP (a dev container's daemon)")
      .option("--two-way", "also follow the remote and write its changes here (never over a local change)"),
  )
    .addHelpText("after", WATCH_EXAMPLES)
    .action((flags: WatchFlags) => runWatchCommand(flags));
}

function addRunCommand(program: Command): void {
  addWatchOptions(
    program
      .command("run")
      .description("start an agent, pass its stdout through and sync what it changes; exit with its code when it fails")
      .usage("[options] -- <agent command ...>")
      .argument("<command...>", "the agent command and its arguments, after --")
      .addOption(new Option("--agent <name>", "the agent's stream format (default: from the command's name)").choices(["auto", ...agentNames]))
      .option("--pull", "pull the remote project first; a conflict (or any failed pull) stops before the agent starts")
      .option("--raw", "on a terminal too, print the agent's output unchanged instead of the readable view (a pipe or a file always gets it unchanged)")
      .option("--exit-grace <ms>", "after the agent exits, wait this long for its stdout to close (a process it left running may hold it)", int("--exit-grace"), DEFAULTS.exitGraceMs)
      .option("--two-way", "also follow the remote while the agent runs and write its changes here (never over a local change)"),
  )
    .addHelpText("after", RUN_EXAMPLES)
    .action((command: string[], flags: RunFlags) => runRunCommand(command, flags));
}

function addPushCommand(program: Command): void {
  addLogOptions(
    addTreeOptions(
      addConnectionOptions(
        program
          .command("push")
          .description("commit what changed here: the given paths, the journal of an earlier run (--pending), or the whole tree")
          .argument("[paths...]", "files or directories to push, relative to the current directory (default: everything)")
          .option("--pending", "retry what earlier runs journaled in <root>/.uspark/pending.json")
          .option("--delete", "accepted for compatibility: deletes made here are always pushed (see --help)")
          .option("--force", `yours wins: conflicts (of the given paths, or all) are committed over the remote's, and deletes of more than ${MASS_DELETE_TEXT} of the project are carried out`)
          .option("--dry-run", "list what would be pushed and deleted; send nothing")
          .option("--onto-rewound", "the server was restored from an older backup (every command refuses it): commit this tree's files onto it as it is now, and sync with its history from then on")
          .addOption(timeoutOption("give up when the server has not answered for this long"))
          .addOption(flushTimeoutAlias())
          .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
          .option("--max-file-size <bytes>", "skip larger files", int("--max-file-size"), DEFAULTS.maxFileSize)
          .option("--concurrency <n>", "parallel blob uploads", positive("--concurrency"), DEFAULTS.concurrency),
      ),
    ),
  )
    .addHelpText("after", PUSH_HELP)
    .action((paths: string[], flags: PushFlags) => runPushCommand(paths, flags));
}

function addPullCommand(program: Command): void {
  addLogOptions(
    addTreeOptions(
      addConnectionOptions(
        program
          .command("pull")
          .description("write the remote's changes under the root: only what differs, never over local changes")
          .argument("[paths...]", "files or directories to pull, relative to the current directory (default: everything)")
          .option("--force", `theirs wins: conflicts (of the given paths, or all) are overwritten after a backup in .uspark/backup/, and deletes of more than ${MASS_DELETE_TEXT} are carried out`)
          .option("--delete", "accepted for compatibility: deletes made remotely are always pulled (see --help)")
          .option("--dry-run", "print what would be pulled and deleted; change nothing")
          .addOption(timeoutOption("give up when the server has not answered for this long"))
          .addOption(flushTimeoutAlias())
          .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
          .option("--concurrency <n>", "requests in flight", positive("--concurrency"), DEFAULTS.concurrency),
      ),
    ),
  )
    .addHelpText("after", PULL_HELP)
    .action((paths: string[], flags: PullFlags) => runPullCommand(paths, flags));
}

function addResolveCommand(program: Command): void {
  addLogOptions(
    addTreeOptions(
      addConnectionOptions(
        program
          .command("resolve")
          .description("end a conflict, on every machine: yours, theirs, or both kept (the conflict copy goes)")
          .argument("<path>", "the file in conflict, relative to the current directory")
          .option("--mine", "yours wins: committed over the remote's version, the conflict copy deleted")
          .option("--theirs", "the remote's wins: written here (yours kept in .uspark/backup/ first), the conflict copy deleted")
          .option("--both", "the remote's at the path, yours kept as a file of its own (the copy)")
          .addOption(timeoutOption("give up when the server has not answered for this long"))
          .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs),
        { create: false },
      ),
    ),
  )
    .addHelpText("after", RESOLVE_HELP)
    .action((path: string, flags: ResolveFlags) => runResolveCommand(path, flags));
}

/** `projects` and `projects create`. */
function addProjectsCommands(program: Command): void {
  const projects = addLogOptions(
    addServerOptions(program.command("projects").description("list the projects the token can see (on stdout)").option("--json", "one JSON object instead of a table")),
  )
    .addHelpText("after", PROJECTS_HELP)
    .action((flags: ProjectsFlags) => runProjectsCommand(flags));
  addLogOptions(addServerOptions(projects.command("create").description("create a project on the server").argument("<id>", "the new project's id")))
    .addHelpText("after", PROJECTS_HELP)
    // The parent's connection flags are read wherever they stand (`projects create x --api-url …`).
    .action((id: string, _flags: ProjectsFlags, command: Commander.Command) => runProjectsCreateCommand(id, command.optsWithGlobals<ProjectsFlags>()));
}

function addLoginCommand(program: Command): void {
  addLoginOptions(program.command("login").description("log in to a server through its web view (device code): the token is saved for that server in ~/.uspark/config.json"))
    .option("--project <id>", "a project to ask for (repeatable): ticked on the approval page", collect)
    .addOption(new Option("--scope <scope>", "the access to ask for: read, or write (also push)").choices(["read", "write"]))
    .addHelpText("after", LOGIN_HELP)
    .action(async (flags: LoginFlags) => (await loginCommands()).runLoginCommand(flags));
}

function addLogoutCommand(program: Command): void {
  addLoginOptions(program.command("logout").description("remove the token uspark login saved for a server"))
    .addHelpText("after", LOGIN_HELP)
    .action(async (flags: LoginFlags) => (await loginCommands()).runLogoutCommand(flags));
}

/** `serve` and `serve token create|list|revoke`. */
function addServeCommands(program: Command): void {
  const serve = program
    .command("serve")
    .description("run the reference project server: the project API and its web view (open the address it prints in a browser)")
    .option("--data <dir>", "where projects, commits and blobs are stored (a directory; default ~/.uspark/serve-data)")
    .option("--db <postgres-url>", "keep everything in PostgreSQL instead (env USPARK_DATABASE_URL); replicas may share it")
    .option("--port <port>", "port to listen on (0: any free port)", int("--port"), 4400)
    .option("--host <host>", "address to bind; other than loopback only with --token", "127.0.0.1")
    .option("--public-url <url>", "the URL clients and browsers use when it is not the bound address (a proxy in front): its name is served too")
    .option("--allowed-host <name>", "another host name to serve, name (any port) or name:port (repeatable)", collect)
    .option("--token <token>", "the admin token, required on every request but those of scoped tokens (or USPARK_SERVE_TOKEN, which ps does not show)")
    .option("-q, --quiet", "print errors and the address only")
    .option("-v, --verbose", "print every request")
    .option("--max-blob-bytes <bytes>", "the largest file (blob) it accepts; larger ones get 413 (default: 104857600, 100 MiB)", positive("--max-blob-bytes"))
    .addOption(new Option("--latency <ms>", "delay every answer (benchmarks)").hideHelp().argParser(int("--latency")))
    .addHelpText("after", SERVE_HELP)
    .action((flags: ServeFlags) => runServeCommand(flags));
  addTokenCommands(serve);
}

/** Made from the program's other commands, so it is built with all of them (commandsFor). */
function addCompletionCommand(program: Command): void {
  program
    .command("completion")
    .description("print a shell completion script (bash, zsh or fish) for uspark's commands and flags")
    .addArgument(new Argument("<shell>", "the shell").choices(SHELLS))
    .addHelpText("after", COMPLETION_HELP)
    .action((shell: Shell) => printToStdout(completionScript(shell, completionCommands(program))));
}

// Loaded when their command runs, as the other commands' modules are (commands.ts): not at every start.
const loginCommands = () => import("./cli/login.js");
const tokenCommands = () => import("./cli/token-commands.js");

function addLoginOptions(command: Command): Command {
  return command
    .option("--api-url <url>", `the server (or USPARK_API_URL; default: apiUrl of ~/.uspark/config.json, else ${DEFAULT_API_URL})`)
    .option("--insecure", "allow plain http:// to a host other than this machine");
}

/** `uspark serve token create|list|revoke` (docs/access.md#tokens-and-scopes), on the store serve uses. */
function addTokenCommands(serve: Command): void {
  const token = serve.command("token").description("scoped tokens: some projects, read or write, optional expiry; stored hashed").addHelpText("after", TOKEN_HELP);
  addStoreOptions(token.command("create").description("make a token and print its secret, once, on stdout"))
    .requiredOption("--project <id>", "a project the token may use (repeatable)", collect)
    .addOption(new Option("--scope <scope>", "read: GET only; write: also push").choices(["read", "write"]).makeOptionMandatory())
    .option("--expires <days>", `refused after this many days (1 to ${MAX_EXPIRES_DAYS})`, expiresDays)
    .addHelpText("after", TOKEN_HELP)
    // `serve` has --data and --db too, and commander gives them to it wherever they stand.
    .action(async (_flags: TokenCreateFlags, command: Command) => (await tokenCommands()).runTokenCreateCommand(command.optsWithGlobals<TokenCreateFlags>()));
  addStoreOptions(token.command("list").description("every token: id, scope, status, dates, projects (never a secret)"))
    .option("--json", "one JSON object { tokens: [...] }")
    .addHelpText("after", TOKEN_HELP)
    .action(async (_flags: StoreFlags, command: Command) => (await tokenCommands()).runTokenListCommand(command.optsWithGlobals<StoreFlags & { json?: boolean }>()));
  addStoreOptions(token.command("revoke").description("refuse a token from the next request on (on every server of this store)"))
    .argument("<id>", "the token's id, as token list shows it")
    .addHelpText("after", TOKEN_HELP)
    .action(async (id: string, _flags: StoreFlags, command: Command) => (await tokenCommands()).runTokenRevokeCommand(id, command.optsWithGlobals<StoreFlags>()));
}

function addStoreOptions(command: Command): Command {
  return command
    .option("--data <dir>", "the file store uspark serve uses (default ~/.uspark/serve-data)")
    .option("--db <postgres-url>", "the PostgreSQL store uspark serve uses (env USPARK_DATABASE_URL)");
}

// status, diff, log, ls, cat, restore (docs/commands.md#status-diff-and-history): what is in sync,
// what changed, what was.

function addStatusCommand(program: Command): void {
  addInspectOptions(program.command("status").description("what is not in sync: changes here, changes remotely, conflicts (exit 1 if any)"))
    .option("--json", "one JSON object (a documented, versioned shape)")
    .option("--short", "one line a path: two letters (here, remotely), then the path")
    .addHelpText("after", STATUS_HELP)
    .action((flags: StatusFlags) => runStatusCommand(flags));
}

function addDiffCommand(program: Command): void {
  addInspectOptions(program.command("diff").description("unified diffs of what changed here since the last sync (--remote: what a pull would change)"))
    .argument("[paths...]", "files or directories, relative to the current directory (default: everything)")
    .option("--remote", "what a pull would change here: your file, then the remote's")
    .addHelpText("after", DIFF_HELP)
    .action((paths: string[], flags: DiffFlags) => runDiffCommand(paths, flags));
}

function addLogCommand(program: Command): void {
  addInspectOptions(program.command("log").description("the remote's commits, newest first: version, time, agent and session, paths"))
    .argument("[path]", "only commits that touched this file or directory")
    .option("-n <count>", "how many commits", positive("-n"), 20)
    .option("--json", "one JSON object { format: 1, version, commits }")
    .addHelpText("after", HISTORY_HELP)
    .action((path: string | undefined, flags: HistoryFlags) => runLogCommand(path, flags));
}

function addLsCommand(program: Command): void {
  addInspectOptions(program.command("ls").description("the remote's files (--at N: as of version N), one path a line"))
    .option("--at <version>", "as of this version", int("--at"))
    .addHelpText("after", HISTORY_HELP)
    .action((flags: HistoryFlags) => runLsCommand(flags));
}

function addCatCommand(program: Command): void {
  addInspectOptions(program.command("cat").description("a remote file's bytes on stdout (--at N: as of version N)"))
    .argument("<path>", "the file, relative to the current directory")
    .option("--at <version>", "as of this version", int("--at"))
    .addHelpText("after", HISTORY_HELP)
    .action((path: string, flags: HistoryFlags) => runCatCommand(path, flags));
}

function addRestoreCommand(program: Command): void {
  addInspectOptions(program.command("restore").description("commit the content these paths had at version N back, and write it here (a local edit kept in .uspark/backup/)"))
    .argument("<paths...>", "files or directories, relative to the current directory")
    .requiredOption("--at <version>", "the version to restore", int("--at"))
    .addHelpText("after", HISTORY_HELP)
    .action((paths: string[], flags: HistoryFlags & { at: number }) => runRestoreCommand(paths, flags));
}

/** status, diff, log, ls, cat, restore: the project's connection and tree, and how long to wait for the server. */
function addInspectOptions(command: Command): Command {
  return addLogOptions(
    addTreeOptions(addConnectionOptions(command, { create: false }))
      .addOption(timeoutOption("give up when the server has not answered for this long"))
      .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs),
  );
}

function addWatchOptions(command: Command): Command {
  return addLogOptions(
    addTreeOptions(
      addConnectionOptions(command)
        .option("--dry-run", "detect and print what would be pushed; send nothing")
        .option("--debounce <ms>", "push after this long without a new change", int("--debounce"), DEFAULTS.debounceMs)
        .option("--max-wait <ms>", "push at the latest this long after a batch's first change", int("--max-wait"), DEFAULTS.maxWaitMs)
        .addOption(timeoutOption("at the end, wait this long for the last pushes (and give up on a server silent for this long)"))
        .addOption(flushTimeoutAlias())
        .option("--request-timeout <ms>", "time limit of one request", int("--request-timeout"), DEFAULTS.requestTimeoutMs)
        .option("--max-file-size <bytes>", "skip (and report) larger files", int("--max-file-size"), DEFAULTS.maxFileSize)
        .option("--concurrency <n>", "parallel blob uploads", positive("--concurrency"), DEFAULTS.concurrency)
        .option("--no-fs-watch", "do not watch the file system for changes made outside tool events")
        .option("--poll [ms]", "poll the file system (bind mounts in containers where native events never come)", int("--poll"))
        .option("--rescan <ms>", "compare the whole tree with what was synced this often (0: only at start and end)", int("--rescan"), DEFAULTS.rescanMs)
        .option("--max-line-length <bytes>", "pass longer lines through without parsing them", positive("--max-line-length"))
        .addOption(transcriptOption()),
    ),
  );
}

/**
 * `--timeout`: how long a server may stay silent before the command gives up (push, pull, status
 * and the others), or a session's last pushes may take at its end (watch, run). One name for one
 * idea; `--flush-timeout`, its name until 0.4 for push, pull and the watchers, is still taken.
 */
function timeoutOption(description: string): Commander.Option {
  return new Option("--timeout <ms>", description).argParser(int("--timeout")).default(DEFAULTS.flushTimeoutMs);
}

/** The older name of --timeout (flags.ts timeoutOf reads both): hidden from help and completion. */
function flushTimeoutAlias(): Commander.Option {
  return new Option("--flush-timeout <ms>", "the older name of --timeout").argParser(int("--flush-timeout")).hideHelp();
}

/** `--transcript` (watch, watch-claude, run): off by default, transcripts hold prompts and file contents. */
function transcriptOption(): Commander.Option {
  return new Option("--transcript", "also send the agent's stream, byte for byte, as this session's transcript (it holds prompts and file contents)");
}

/** The connection flags; `--create` only where a command may write to a project it made. */
function addConnectionOptions(command: Command, { create = true } = {}): Command {
  command.option("--project-id <id>", "the remote project (or USPARK_PROJECT_ID)");
  if (create) command.option("--create", "create the project on the server if it does not exist yet (else that is an error, exit 2)");
  return addServerOptions(command, { project: true });
}

/**
 * Which server, and how to be let in: `projects` names no project of its own. Its --project-id
 * and --create, offered until 0.4 and meaning nothing there, are still taken, out of sight.
 */
function addServerOptions(command: Command, { project = false } = {}): Command {
  if (!project) command.addOption(new Option("--project-id <id>").hideHelp()).addOption(new Option("--create").hideHelp());
  return command
    .option("--api-url <url>", `the project API (or USPARK_API_URL; default ${DEFAULT_API_URL})`)
    .option("--token <token>", "bearer token (or USPARK_TOKEN, or ~/.uspark/config.json)")
    .option("--insecure", "allow plain http:// to a host other than this machine");
}

function addTreeOptions(command: Command): Command {
  return command
    .option("--root <dir>", "the project root; nothing outside it is synced (default: the nearest directory upward holding .uspark/state.json, else the current one)")
    .option("--ignore <glob>", "never sync files matching this gitignore-style pattern (repeatable)", collect)
    .option("--prefix <dir>", "sync only files under <root>/<dir>, stored without that prefix");
}

function addLogOptions(command: Command): Command {
  return command
    .option("-q, --quiet", "print errors only")
    .option("-v, --verbose", "print every detection and request")
    .addOption(new Option("--log-format <format>", "how stderr lines are written").choices(["text", "json"]).default("text"));
}


/** Commander's own complaints (unknown flag, missing argument), as one line through the reporter. */
function reportCommanderError(text: string): void {
  const message = text.trim().replace(/^error: /, "").replace(/\s*\n\s*/g, " ");
  new Reporter().error("usage", `${message} (run with --help for usage)`);
}

function int(name: string) {
  return (raw: string) => parseNonNegativeInt(name, raw);
}

function positive(name: string) {
  return (raw: string) => parsePositiveInt(name, raw);
}

/** Ten years: far past any use, and a date every store and `token list` can show. */
const MAX_EXPIRES_DAYS = 3650;

/** `--expires <days>`: 1 to MAX_EXPIRES_DAYS, refused before anything is stored. */
function expiresDays(raw: string): number {
  const days = parsePositiveInt("--expires", raw);
  if (days > MAX_EXPIRES_DAYS) throw new UsageError(`--expires must be at most ${MAX_EXPIRES_DAYS} days (ten years)`);
  return days;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
