// `uspark serve token create|list|revoke` (docs/access.md#tokens-and-scopes): scoped tokens, on the
// store `uspark serve` uses. The secret is printed once, alone on stdout; the store keeps its
// SHA-256 only.

import { UsageError } from "../config/config.js";
import { EXIT } from "../util/exit-codes.js";
import { Reporter } from "../report/reporter.js";
import { formatTable } from "../text/table.js";
import { validateProjectId } from "../api/validate.js";
import type { CredentialStore, TokenRecord } from "../server/credentials.js";
import { exit, printToStdout, usageFailure } from "./kit/exit.js";
import { storeOf, type StoreFlags } from "./serve-store.js";
import { errorText } from "../errors/text.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the token commands read of their flags (declared once in serve-token.ts, which the compiler checks against these). */
export interface TokenCreateRequest extends StoreFlags {
  project: string[];
  scope: "read" | "write";
  expires?: number;
}

export interface TokenListRequest extends StoreFlags {
  json?: true;
}

export async function runTokenCreateCommand(flags: TokenCreateRequest): Promise<void> {
  const report = new Reporter();
  for (const project of flags.project) {
    const bad = validateProjectId(project);
    if (bad) return usageFailure(report, new UsageError(`--project ${JSON.stringify(project)}: ${bad}`));
  }
  const now = Date.now();
  const expires = flags.expires === undefined ? undefined : now + flags.expires * DAY_MS;
  const { createToken } = await import("../server/index.js");
  const made = await withCredentials(flags, report, (credentials) =>
    createToken(credentials, { projects: flags.project, access: flags.scope, expires }, now),
  );
  if (!made) return;
  const until = expires === undefined ? "never expires" : `expires ${new Date(expires).toISOString()}`;
  report.info(
    "token",
    `created token ${made.record.id}: ${made.record.access} on ${made.record.projects.join(", ")}; ${until}. The secret below is shown this once.`,
    { tokenId: made.record.id },
  );
  await printToStdout(`${made.secret}\n`);
}

export async function runTokenListCommand(flags: TokenListRequest): Promise<void> {
  const report = new Reporter();
  const listing = await withCredentials(flags, report, (credentials) => credentials.tokens());
  if (!listing) return;
  const { tokenStatus } = await import("../server/index.js");
  const { tokens, damaged } = listing;
  if (damaged > 0) report.warn("token", `${damaged} damaged token record${damaged === 1 ? "" : "s"} left out (refused by the server too)`);
  const now = Date.now();
  const rows = tokens.map((token) => ({ ...publicFields(token), status: tokenStatus(token, now) }));
  if (flags.json) return printToStdout(`${JSON.stringify({ tokens: rows })}\n`);
  // A device token shows the token that approved it: revoking that one revokes it too.
  const table = [["ID", "SCOPE", "STATUS", "CREATED", "EXPIRES", "PARENT", "PROJECTS"]].concat(
    rows.map((row) => [row.id, row.access, row.status, row.created, row.expires ?? "never", row.parent ?? "-", row.projects.join(",")]),
  );
  await printToStdout(formatTable(table));
}

export async function runTokenRevokeCommand(id: string, flags: StoreFlags): Promise<void> {
  const report = new Reporter();
  const outcome = await withCredentials(flags, report, (credentials) => credentials.revokeToken(id, Date.now()));
  if (!outcome) return;
  if (outcome === "unknown")
    return usageFailure(report, new UsageError(`no token with id ${JSON.stringify(id)}`, "see uspark serve token list"));
  report.info("token", `revoked token ${id}: refused from the next request on`, { tokenId: id });
  exit(EXIT.ok);
}

/** What `token list` shows of a token: everything but its hash (and its parent's), the parent by id. */
function publicFields(token: TokenRecord): {
  id: string;
  access: string;
  projects: string[];
  created: string;
  expires?: string;
  revoked?: string;
  parent?: string;
} {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return {
    id: token.id,
    access: token.access,
    projects: token.projects,
    created: iso(token.created)!,
    expires: iso(token.expires),
    revoked: iso(token.revoked),
    parent: token.parent?.id,
  };
}

/** Runs `work` on the store's credentials; undefined after an error was reported (and the exit code set). */
async function withCredentials<T>(
  flags: StoreFlags,
  report: Reporter,
  work: (credentials: CredentialStore) => Promise<T>,
): Promise<T | undefined> {
  const { openCredentials } = await import("../server/index.js");
  let opened: Awaited<ReturnType<typeof openCredentials>>;
  try {
    opened = await openCredentials(storeOf(flags));
  } catch (error) {
    // A store that cannot be used at all (StoreSetupError, code EUSAGE) is a configuration error.
    const setup = !(error instanceof UsageError) && (error as { code?: string }).code === "EUSAGE";
    usageFailure(report, setup ? new UsageError(errorText(error)) : error);
    return undefined;
  }
  try {
    return await work(opened.credentials);
  } catch (error) {
    report.error("store", `the store cannot be used: ${errorText(error)}`);
    exit(EXIT.notSynced);
    return undefined;
  } finally {
    await opened.close();
  }
}
