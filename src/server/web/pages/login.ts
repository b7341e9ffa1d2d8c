// /login: a form with one field, `token`. Its POST asks the Authority, and on success opens a new
// session (a new id) holding the token on the server; the browser only gets the session's id.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Authority } from "../../authority.js";
import { readForm } from "../forms.js";
import { html } from "../html.js";
import { csrfField, page, redirect, sendPage } from "../layout.js";
import { sessionCookie, type WebSession, type WebSessions } from "../web-sessions.js";

/**
 * `open`: the server was started without an admin token (loopback only): any token or none is the
 * admin there, and the page says so rather than ask for a token nobody was given.
 */
export function loginPage(res: ServerResponse, sessions: WebSessions, current: WebSession | undefined, open: boolean, error?: string): void {
  // The form's own session carries its CSRF token; a signed-in person keeps theirs until signing in anew.
  const session = current ?? sessions.open(undefined);
  const body = html`
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="/login" class="card">
${csrfField(session)}
<label for="token">Token</label>
${
  open
    ? html`<input id="token" name="token" type="password" autocomplete="current-password" size="40">
<p class="muted">This server was started without a token: it is open to this machine, and signing in needs none (a token made by <code>uspark serve token create</code> signs in with its own scope).</p>`
    : html`<input id="token" name="token" type="password" autocomplete="current-password" required autofocus size="40">
<p class="muted">The admin token of <code>uspark serve</code>, or one made by <code>uspark serve token create</code>.</p>`
}
<button type="submit">Sign in</button>
</form>`;
  const headers: Record<string, string> = current ? {} : { "set-cookie": sessionCookie(session) };
  sendPage(res, error ? 401 : 200, page({ title: "Sign in", body }), headers);
}

export async function signIn(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: WebSessions,
  current: WebSession | undefined,
  authority: Authority,
): Promise<void> {
  const form = await readForm(req, current);
  const token = form.get("token") ?? "";
  // No token: the admin on an open server, no one on another.
  const principal = await authority.identify(token === "" ? undefined : token);
  if (!principal) return loginPage(res, sessions, current, await isOpen(authority), "That token is not accepted: wrong, revoked or expired.");
  sessions.close(current!);
  const session = sessions.open(token);
  redirect(res, "/", { "set-cookie": sessionCookie(session) });
}

/** Was the server started without an admin token? Then a request with none is the admin. */
export async function isOpen(authority: Authority): Promise<boolean> {
  return (await authority.identify(undefined)) !== undefined;
}
