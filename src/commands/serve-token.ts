import { parsePositiveInt, UsageError } from "../config/config.js";
import type { Command } from "./kit/commander.js";
import { addFlags, choiceFlag, listFlag, parsedFlag, switchFlag, textFlag, type FlagValues } from "./kit/flag-kit.js";
import type { StoreFlags } from "./serve-store.js";

// `uspark serve token create|list|revoke`: their flags and help; their work is serve-token-run.ts,
// loaded when one runs.

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

/** Ten years: far past any use, and a date every store and `token list` can show. */
const MAX_EXPIRES_DAYS = 3650;

/** The store a token command works on: uspark serve's (serve's own --data and --db are read too). */
const storeFlags = {
  data: textFlag("--data <dir>", "the file store uspark serve uses (default ~/.uspark/serve-data)"),
  db: textFlag("--db <postgres-url>", "the PostgreSQL store uspark serve uses (env USPARK_DATABASE_URL)"),
};

const createFlags = {
  ...storeFlags,
  project: listFlag("--project <id>", "a project the token may use (repeatable)").required(),
  scope: choiceFlag("--scope <scope>", "read: GET only; write: also push", ["read", "write"]).required(),
  expires: parsedFlag("--expires <days>", `refused after this many days (1 to ${MAX_EXPIRES_DAYS})`, expiresDays),
};

const listFlags = { ...storeFlags, json: switchFlag("--json", "one JSON object { tokens: [...] }") };

export type TokenCreateFlags = FlagValues<typeof createFlags>;
export type TokenListFlags = FlagValues<typeof listFlags>;

// `serve` has --data and --db too, and commander gives them to it wherever they stand: each reads optsWithGlobals.
const run = () => import("./serve-token-run.js");

/** `uspark serve token create|list|revoke` (docs/access.md#tokens-and-scopes), on the store serve uses. */
export function addTokenCommands(serve: Command): void {
  const token = serve
    .command("token")
    .description("scoped tokens: some projects, read or write, optional expiry; stored hashed")
    .addHelpText("after", TOKEN_HELP);
  addFlags(token.command("create").description("make a token and print its secret, once, on stdout"), createFlags)
    .addHelpText("after", TOKEN_HELP)
    .action(async (_flags: unknown, command: Command) => (await run()).runTokenCreateCommand(command.optsWithGlobals<TokenCreateFlags>()));
  addFlags(token.command("list").description("every token: id, scope, status, dates, projects (never a secret)"), listFlags)
    .addHelpText("after", TOKEN_HELP)
    .action(async (_flags: unknown, command: Command) => (await run()).runTokenListCommand(command.optsWithGlobals<TokenListFlags>()));
  addFlags(token.command("revoke").description("refuse a token from the next request on (on every server of this store)"), storeFlags)
    .argument("<id>", "the token's id, as token list shows it")
    .addHelpText("after", TOKEN_HELP)
    .action(async (id: string, _flags: unknown, command: Command) =>
      (await run()).runTokenRevokeCommand(id, command.optsWithGlobals<StoreFlags>()),
    );
}

/** `--expires <days>`: 1 to MAX_EXPIRES_DAYS, refused before anything is stored. */
function expiresDays(raw: string): number {
  const days = parsePositiveInt("--expires", raw);
  if (days > MAX_EXPIRES_DAYS) throw new UsageError(`--expires must be at most ${MAX_EXPIRES_DAYS} days (ten years)`);
  return days;
}
