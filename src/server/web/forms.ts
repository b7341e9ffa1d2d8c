// Reading a POSTed form of the web view, its CSRF field checked against the session.

import type { IncomingMessage } from "node:http";
import { HttpError, readAll } from "../http.js";
import { csrfMatches, type WebSession } from "./web-sessions.js";

/** No form of the web view comes near this. */
const MAX_FORM_BYTES = 64 * 1024;

export async function readForm(req: IncomingMessage, session: WebSession | undefined): Promise<URLSearchParams> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    throw new HttpError(415, "unsupported_media_type", "forms are sent as application/x-www-form-urlencoded");
  }
  const form = new URLSearchParams((await readAll(req, MAX_FORM_BYTES)).toString("utf8"));
  if (!session || !csrfMatches(session, form.get("csrf") ?? undefined)) {
    throw new HttpError(403, "csrf", "this form has expired or did not come from this site: open the page again");
  }
  return form;
}
