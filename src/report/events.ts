/** How much a record matters; `--quiet` and `--verbose` choose which are said. */
export type Level = "error" | "warn" | "info" | "debug";

/**
 * Every event of the log (`--log-format json` is an API: docs/log-events.md), with the levels it
 * is said at, its fields and when it is said: the Reporter takes no other name, nor a level the
 * event is not listed at. The tables of docs/log-events.md are made from it (`npm run
 * docs:generate`), and a test keeps the two equal.
 *
 * Runtime code imports the types only: the descriptions stay out of the CLI's start-up bundle.
 */
export const REPORT_EVENTS = {
  change: {
    section: "sync",
    levels: ["info", "debug"],
    fields: "`path`, `cause` (the tool, or the watcher/scan), `kind`, `confirmed`",
    when: "a file change was detected (info with `--dry-run` once per file and cause)",
  },
  commit: { section: "sync", levels: ["info"], fields: "`version`, `files`, `deleted`", when: "a commit was acknowledged" },
  "commit-failed": { section: "sync", levels: ["warn"], fields: "`paths`", when: "a commit was refused for good; its paths are journaled" },
  intent: {
    section: "sync",
    levels: ["debug", "warn"],
    fields: "`key`; `path`",
    when: "the commit of an earlier run (its intent) was not applied, or could not be settled now; not sent again (warn): `path` changed on a server older than API 1.2",
  },
  conflict: {
    section: "sync",
    levels: ["warn"],
    fields: "`path`, `local`, `remote`, `copy`",
    when: "a path changed on both sides: the remote's version stays, yours is committed as `copy` ([sync.md](sync.md#conflicts))",
  },
  "conflict-retry": {
    section: "sync",
    levels: ["debug"],
    fields: "`paths`",
    when: "the remote moved under a commit (409): those paths are decided again",
  },
  conflicts: { section: "sync", levels: ["error"], fields: "`paths`, `conflicts`", when: "at the end: conflicts still open" },
  resolved: { section: "sync", levels: ["info"], fields: "`path`", when: "an open conflict was resolved (the two sides equal, or forced)" },
  "not-resolved": {
    section: "sync",
    levels: ["error"],
    fields: "`path`",
    when: "`resolve`: the path is not resolved (the remote moved meanwhile, or a step failed)",
  },
  "copy-kept": {
    section: "sync",
    levels: ["warn"],
    fields: "`path`, `copy`",
    when: "`resolve`: your conflict copy changed since it was committed: kept",
  },
  "mass-delete": {
    section: "sync",
    levels: ["warn", "error"],
    fields: "`paths`, `deletes`, `base`",
    when: "deletes held by the [guard](sync.md#mass-deletes)",
  },
  pulled: {
    section: "sync",
    levels: ["info", "debug"],
    fields: "`version`, `files`, `deleted` (a round); `path` (one file, debug)",
    when: "a pull or two-way watch wrote the remote's changes here",
  },
  removed: { section: "sync", levels: ["debug"], fields: "`path`", when: "a remote delete carried out here" },
  backup: {
    section: "sync",
    levels: ["info"],
    fields: "`path`, `backup`",
    when: "your version was kept under `.uspark/backup/` before a forced write",
  },
  "pull-kept": {
    section: "sync",
    levels: ["warn", "debug"],
    fields: "`path`",
    when: "a file kept changing here while the pull ran: kept, decided again",
  },
  "pull-refused": {
    section: "sync",
    levels: ["warn"],
    fields: "`path`, `reason`",
    when: "a remote path not written (invalid, in `.git/` or `.uspark/`, through a symlink)",
  },
  "push-refused": {
    section: "sync",
    levels: ["warn"],
    fields: "`path`, `reason`",
    when: "`push`: a local path not pushed (invalid as a remote path, or a file and a directory under one name); the local file is kept",
  },
  "pull-failed": { section: "sync", levels: ["error", "warn"], fields: "`path`, `reason`", when: "a pull, or one file of it, failed" },
  "push-plan": {
    section: "sync",
    levels: ["info"],
    fields: "`op` (`push`, `delete`, `pull`, `remove`, `conflict`, `copy`), `path`",
    when: "`--dry-run`: each change the round would make",
  },
  "pull-plan": {
    section: "sync",
    levels: ["info"],
    fields: "`op` (`push`, `delete`, `pull`, `remove`, `conflict`, `copy`), `path`",
    when: "`--dry-run`: each change the round would make",
  },
  summary: {
    section: "sync",
    levels: ["info", "error"],
    fields: "see below",
    when: "the end of a command (error when something was left)",
  },
  "delete-unsynced": {
    section: "sync",
    levels: ["warn"],
    fields: "`path`",
    when: "a file deleted here that could not be deleted remotely",
  },
  "not-synced": { section: "sync", levels: ["error"], fields: "`paths`, `reason`", when: "at the end: files not synced, listed" },
  "batch-failed": { section: "sync", levels: ["warn"], fields: "`paths`", when: "a batch could not be synced; it is retried or journaled" },
  "late-change": { section: "sync", levels: ["debug"], fields: "`path`", when: "a file changed after the session ended; not synced" },
  skipped: {
    section: "sync",
    levels: ["warn", "info", "debug"],
    fields: "`path`, `reason` (`cause` from the path policy)",
    when: "a file not synced (too large, ignored, unrepresentable)",
  },
  ignore: {
    section: "sync",
    levels: ["info"],
    fields: "`path`",
    when: "a file not synced: the process's own stdout or stderr, redirected to a file inside the tree (a daemon's log)",
  },
  refused: {
    section: "sync",
    levels: ["warn"],
    fields: "`path`, `cause`",
    when: "a path outside the root or otherwise refused by the path policy; a journaled entry that can no longer be sent",
  },
  unsyncable: { section: "sync", levels: ["warn"], fields: "`path`", when: "a file name that is not UTF-8" },
  "old-api": { section: "sync", levels: ["warn"], fields: "", when: "the server cannot refuse a commit over a newer edit (API < 1.2)" },
  rewound: {
    section: "sync",
    levels: ["error", "info"],
    fields: "`version`",
    when: "`push --onto-rewound`: this tree's files were committed onto the rewound server's history, or not all of them; a command refuses a server whose history does not extend the one synced",
  },
  remote: { section: "sync", levels: ["debug"], fields: "`version`, `files`, `api`", when: "the remote's listing was read" },
  "sync-stopped": {
    section: "sync",
    levels: ["error"],
    fields: "`reason`",
    when: "the server refused the token or the project: syncing stops for this session",
  },
  "sync-error": { section: "sync", levels: ["error"], fields: "", when: "an internal error while syncing" },
  "two-way": {
    section: "sync",
    levels: ["info", "warn"],
    fields: "",
    when: "following the remote: no commit feed (polling), or a failure retried",
  },
  scan: {
    section: "tree",
    levels: ["debug"],
    fields: "`cause` (`start`, `ready`, `rescan`, `end`), `files`, `hashed`, `targets`; `skipped`",
    when: "a scan of the tree finished (or the end scan was not needed)",
  },
  "scan-cut-short": { section: "tree", levels: ["warn"], fields: "`cause`", when: "`--timeout` or a signal cut a scan short (exit 1)" },
  "scan-failed": { section: "tree", levels: ["warn"], fields: "`cause`", when: "a scan failed" },
  walk: {
    section: "tree",
    levels: ["warn", "debug"],
    fields: "`path`",
    when: "a directory could not be read, or a symlink was not followed",
  },
  fswatch: {
    section: "tree",
    levels: ["warn", "debug"],
    fields: "`dirs`, `files`, `polledDirs`, `mode`; `path`",
    when: "the file watcher is ready (debug), could not watch, polls, or stopped",
  },
  "fswatch-limit": {
    section: "tree",
    levels: ["warn", "debug"],
    fields: "`path`, `code`",
    when: "the inotify limits are reached: directories are polled instead",
  },
  "fswatch-unreadable": {
    section: "tree",
    levels: ["warn", "debug"],
    fields: "`path`, `code`",
    when: "the file watcher cannot read a directory: changes under it are not seen",
  },
  pending: { section: "tree", levels: ["warn", "debug"], fields: "`paths`", when: "files journaled by an earlier run are still unsynced" },
  "journal-corrupt": {
    section: "tree",
    levels: ["warn"],
    fields: "`file`, `movedTo`",
    when: "the journal could not be read and was moved aside",
  },
  "journal-failed": { section: "tree", levels: ["error"], fields: "", when: "the journal could not be written" },
  "state-corrupt": { section: "tree", levels: ["warn"], fields: "", when: "`.uspark/state.json` unusable: starting without a base" },
  "state-unreadable": { section: "tree", levels: ["warn"], fields: "", when: "`.uspark/state.json` unusable: starting without a base" },
  "state-write": { section: "tree", levels: ["warn"], fields: "", when: "the base could not be written; the next run rescans" },
  lock: {
    section: "tree",
    levels: ["info"],
    fields: "",
    when: "the root's lock (`.uspark/lock`) of a process that is gone was taken over",
  },
  beside: {
    section: "tree",
    levels: ["info"],
    fields: "`pid`, `root`",
    when: "a session runs beside the uspark that watches the root: it syncs what its agent's events name, with no file watcher",
  },
  agent: {
    section: "stream",
    levels: ["info", "warn", "debug"],
    fields: "`agent`",
    when: "the format detected, or an agent whose output carries no file events",
  },
  "agent-format": {
    section: "stream",
    levels: ["warn"],
    fields: "`agent`, `detected`",
    when: "the stream is another agent's than the command reads",
  },
  "no-json": { section: "stream", levels: ["warn"], fields: "", when: "no JSON event in the first 50 lines: the stream flag is missing" },
  "one-object": { section: "stream", levels: ["warn"], fields: "`agent`", when: "the output was one JSON object, not a stream" },
  "long-line": { section: "stream", levels: ["warn"], fields: "", when: "a line over `--max-line-length` was passed through unparsed" },
  "stream-flag": { section: "stream", levels: ["warn"], fields: "", when: "`run`: a known agent started without its stream flag" },
  tty: { section: "stream", levels: ["warn"], fields: "", when: "stdin is a terminal, not a pipe" },
  input: { section: "stream", levels: ["error"], fields: "", when: "reading the agent's output failed" },
  stdout: { section: "stream", levels: ["error"], fields: "", when: "writing stdout failed (exit 74); syncing goes on" },
  "stdout-closed": {
    section: "stream",
    levels: ["debug"],
    fields: "",
    when: "the reader of stdout went away (EPIPE): output stops, syncing goes on",
  },
  output: { section: "stream", levels: ["error"], fields: "", when: "writing stdout failed (the command's own output)" },
  run: {
    section: "stream",
    levels: ["error", "info", "warn"],
    fields: "`command`, `agent`, `reason`",
    when: "`run`: the agent could not start, was not found, failed (`reason`: its own, from its stream), exited, or left its stdout open",
  },
  signal: {
    section: "stream",
    levels: ["info"],
    fields: "",
    when: "a signal arrived: what happens now, and that a second one stops at once",
  },
  transcript: {
    section: "stream",
    levels: ["info", "warn", "error", "debug"],
    fields: "`sessionId`, `unsent`, `spool`",
    when: "the transcript was sent, spooled, or left unsent",
  },
  request: { section: "network", levels: ["debug"], fields: "`request`, `outcome`, `ms`", when: "each HTTP request and its answer" },
  retry: {
    section: "network",
    levels: ["warn", "debug"],
    fields: "`host`, `attempt`, `delayMs`, `code`, `status`, `error`",
    when: "a request failed and is retried (warn at once, then every few seconds)",
  },
  waiting: {
    section: "network",
    levels: ["warn"],
    fields: "`host`, `waitedMs`",
    when: "the server took the connection but has not answered",
  },
  recovered: { section: "network", levels: ["info"], fields: "`host`", when: "the server answers again" },
  "api-v1": { section: "network", levels: ["info"], fields: "`status`", when: "a v1 server: blobs go one request each" },
  project: { section: "network", levels: ["info", "error"], fields: "`projectId`", when: "a project was created, or does not exist" },
  projects: {
    section: "network",
    levels: ["info", "error"],
    fields: "",
    when: "`projects`: none the token can see yet, and how to create one; or the listing failed (error)",
  },
  start: { section: "network", levels: ["info"], fields: "`root`, `projectId`, `apiUrl`, `pid`", when: "a daemon (`--no-stdin`) started" },
  daemon: { section: "network", levels: ["error"], fields: "", when: "a daemon stops for good rather than idle" },
  usage: { section: "commands", levels: ["error"], fields: "`path`", when: "a usage or configuration error (exit 2)" },
  config: { section: "commands", levels: ["warn"], fields: "", when: "the config file: a wide mode, an unknown key" },
  internal: { section: "commands", levels: ["error"], fields: "", when: "an unexpected error (a bug: please report it)" },
  "push-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "status-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "diff-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "resolve-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "log-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "ls-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "cat-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  "restore-failed": { section: "commands", levels: ["error"], fields: "", when: "the command failed" },
  log: { section: "commands", levels: ["info"], fields: "", when: "`log`: nothing to list" },
  "not-found": {
    section: "commands",
    levels: ["error"],
    fields: "`path`, `paths`",
    when: "`cat`, `restore`: no such path at that version",
  },
  restore: {
    section: "commands",
    levels: ["info", "error"],
    fields: "`at`, `version`, `paths`, `code`, `failed`",
    when: "`restore`: committed, or refused",
  },
  login: {
    section: "commands",
    levels: ["info", "warn", "error"],
    fields: "",
    when: "`login` and `logout`: the code to enter, the outcome",
  },
  logout: {
    section: "commands",
    levels: ["info", "warn", "error"],
    fields: "",
    when: "`login` and `logout`: the code to enter, the outcome",
  },
  token: {
    section: "commands",
    levels: ["info", "warn"],
    fields: "`tokenId`",
    when: "`serve token`: created or revoked; `token list`: damaged records left out (warn)",
  },
  store: { section: "commands", levels: ["error"], fields: "", when: "`serve token`: the store cannot be used" },
} as const satisfies Record<string, EventSpec>;

/** The page's sections, in order, each a table of its events. */
export const EVENT_SECTIONS = {
  sync: "Sync",
  tree: "The tree and the journal",
  stream: "The agent's stream",
  network: "The server and the network",
  commands: "Commands",
} as const;

export interface EventSpec {
  section: keyof typeof EVENT_SECTIONS;
  levels: readonly Level[];
  /** Its fields as the page says them (Markdown). */
  fields: string;
  /** When it is said, in one line (Markdown). */
  when: string;
}

/** A name of the log's events. */
export type EventName = keyof typeof REPORT_EVENTS;

/** The events said at `level`. */
export type EventAt<L extends Level> = { [E in EventName]: L extends (typeof REPORT_EVENTS)[E]["levels"][number] ? E : never }[EventName];
