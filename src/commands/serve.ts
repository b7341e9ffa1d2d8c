import { UsageError } from "../config/config.js";
import { Reporter } from "../report/reporter.js";
import { errorCode, errorText } from "../errors/text.js";
import type { Command } from "./kit/commander.js";
import { exit, usageFailure } from "./kit/exit.js";
import { addFlags, countFlag, listFlag, positiveFlag, switchFlag, textFlag, type FlagValues } from "./kit/flag-kit.js";
import { addTokenCommands } from "./serve-token.js";
import { storeOf } from "./serve-store.js";

// `uspark serve`: the reference project server (its work is server/, loaded when it runs).

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

/** serve's flags: its store, where it listens, who may use it, what it says. */
const serveFlags = {
  data: textFlag("--data <dir>", "where projects, commits and blobs are stored (a directory; default ~/.uspark/serve-data)"),
  db: textFlag("--db <postgres-url>", "keep everything in PostgreSQL instead (env USPARK_DATABASE_URL); replicas may share it"),
  port: countFlag("--port <port>", "port to listen on (0: any free port)", 4400),
  host: textFlag("--host <host>", "address to bind; other than loopback only with --token", "127.0.0.1"),
  publicUrl: textFlag(
    "--public-url <url>",
    "the URL clients and browsers use when it is not the bound address (a proxy in front): its name is served too",
  ),
  allowedHost: listFlag("--allowed-host <name>", "another host name to serve, name (any port) or name:port (repeatable)"),
  token: textFlag(
    "--token <token>",
    "the admin token, required on every request but those of scoped tokens (or USPARK_SERVE_TOKEN, which ps does not show)",
  ),
  quiet: switchFlag("-q, --quiet", "print errors and the address only"),
  verbose: switchFlag("-v, --verbose", "print every request"),
  maxBlobBytes: positiveFlag(
    "--max-blob-bytes <bytes>",
    "the largest file (blob) it accepts; larger ones get 413 (default: 104857600, 100 MiB)",
  ),
  latency: countFlag("--latency <ms>", "delay every answer (benchmarks)").hidden(),
};

export type ServeFlags = FlagValues<typeof serveFlags>;

/** `serve` and `serve token create|list|revoke`. */
export function addServeCommands(program: Command): void {
  const serve = addFlags(
    program
      .command("serve")
      .description("run the reference project server: the project API and its web view (open the address it prints in a browser)"),
    serveFlags,
  )
    .addHelpText("after", SERVE_HELP)
    .action((flags: ServeFlags) => runServeCommand(flags));
  addTokenCommands(serve);
}

export async function runServeCommand(flags: ServeFlags): Promise<void> {
  const { runServe } = await import("../server/index.js");
  try {
    // The environment keeps the admin token out of `ps`.
    const token = flags.token ?? (process.env.USPARK_SERVE_TOKEN || undefined);
    await runServe({
      ...storeOf(flags),
      port: flags.port,
      host: flags.host,
      publicUrl: flags.publicUrl,
      allowedHosts: flags.allowedHost,
      token,
      quiet: flags.quiet,
      verbose: flags.verbose,
      maxBlobBytes: flags.maxBlobBytes,
      latencyMs: flags.latency,
    });
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(new Reporter(), error);
    if (errorCode(error) === "EUSAGE") return usageFailure(new Reporter(), new UsageError(errorText(error)));
    if (errorCode(error) === "EADDRINUSE") {
      return usageFailure(
        new Reporter(),
        new UsageError(`port ${flags.port} is in use`, "choose another with --port, or --port 0 for any free port"),
      );
    }
    throw error;
  }
  exit(0);
}
