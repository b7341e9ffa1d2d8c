// `POST /commits` and `GET /commits` (with its long poll) of docs/api.md.

import type { IncomingMessage, ServerResponse } from "node:http";
import { API_ERRORS, API_VERSION, type CommitAnswer, type ConflictEntry } from "../../api/types.js";
import { parseCommitRequest } from "../../api/validate.js";
import type { ProjectAccess } from "../access.js";
import type { RouteContext } from "../context.js";
import { HttpError, readJson, sendJson } from "../http.js";
import { queryCommits } from "./table.js";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export async function commit(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess): Promise<void> {
  const { projectId } = project;
  const key = req.headers["idempotency-key"];
  if (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key)) {
    const message = "an Idempotency-Key header of 1-255 visible ASCII characters is required";
    throw new HttpError(400, "invalid_request", message);
  }
  const parsed = parseCommitRequest(await readJson(req, ctx.limits.maxJsonBytes));
  if (!parsed.ok) {
    const extra = parsed.error === "invalid_path" ? { path: parsed.path } : {};
    throw new HttpError(400, parsed.error, parsed.message, extra);
  }
  const outcome = await project.commit(key, parsed.value);
  switch (outcome.kind) {
    case "committed":
      ctx.onCommit?.({ projectId, version: outcome.version, changes: parsed.value.changes.length });
      return sendJson(res, 200, commitAnswer(outcome));
    case "replayed":
      return sendJson(res, 200, commitAnswer(outcome), { "idempotent-replayed": "true" });
    case "key_reused": {
      const message = "this Idempotency-Key was used by an applied commit with another body: use a new key for a new commit";
      throw new HttpError(422, API_ERRORS.idempotencyKeyReused, message);
    }
    case "conflict": {
      const message = conflictMessage(outcome.conflicts);
      throw new HttpError(409, API_ERRORS.conflict, message, { conflicts: outcome.conflicts, version: outcome.version });
    }
    case "missing_blobs":
      throw new HttpError(422, API_ERRORS.missingBlobs, `${outcome.missing.length} blob(s) must be uploaded first`, {
        missing: outcome.missing,
      });
    case "size_mismatch": {
      const message = `${outcome.path}: size ${outcome.size} differs from the blob's ${outcome.actual} bytes`;
      throw new HttpError(400, API_ERRORS.invalidRequest, message, { path: outcome.path });
    }
  }
}

function commitAnswer(outcome: { version: number; chain: string }): CommitAnswer {
  return { version: outcome.version, chain: outcome.chain, api: API_VERSION };
}

/** What a 409 says: the paths whose expectation failed, and each file/directory clash by both its paths. */
function conflictMessage(conflicts: readonly ConflictEntry[]): string {
  const clashes = conflicts.filter((c) => c.clash !== undefined).map((c) => `${c.path} and ${c.clash}`);
  const expected = conflicts.length - clashes.length;
  const parts = expected > 0 ? [`${expected} path(s) do not hold what the commit expects`] : [];
  if (clashes.length > 0) parts.push(`a file and a directory under one name: ${clashes.join("; ")}`);
  return `${parts.join("; ")}: nothing was applied`;
}

/**
 * `GET /commits?since=N&limit=M[&path=P][&wait=ms]`. With `wait`, answers as soon as the head is
 * past N, else at the end of the wait (or at once when the server closes). A client that goes
 * away ends its wait, and gets no answer; a token revoked or expired meanwhile gets 401 (ProjectAccess).
 */
export async function getCommits(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess): Promise<void> {
  const query = queryCommits(req.url ?? "");
  if (query.wait > 0 && !ctx.closing?.aborted) {
    // One signal for both ends of a wait; a dependent signal per wait on the server's lifelong one
    // (AbortSignal.any) would pile up, so the two are wired by hand and unwired after.
    let gone = false;
    const stop = new AbortController();
    const onGone = () => {
      gone = true;
      stop.abort();
    };
    const onClosing = () => stop.abort();
    res.once("close", onGone);
    ctx.closing?.addEventListener("abort", onClosing, { once: true });
    try {
      await project.waitForCommit(query.since, query.wait, stop.signal);
    } finally {
      res.off("close", onGone);
      ctx.closing?.removeEventListener("abort", onClosing);
    }
    if (gone) return;
  }
  const { since, limit, path } = query;
  sendJson(res, 200, { ...(await project.commits({ since, limit, path, maxBytes: ctx.limits.maxJsonBytes })), api: API_VERSION });
}
