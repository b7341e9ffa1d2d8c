// /login: a form with one field, `token`. Its POST asks the Authority, and on success opens a new
// session (a new id) holding the token on the server; the browser only gets the session's id.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Authority } from "../../authority.js";
import { readForm } from "../forms.js";
import { html } from "../html.js";
import { csrfField, page, redirect, sendPage } from "../layout.js";
import { sessionCookie, type WebSession, type WebSessions } from "../web-sessions.js";

export interface LoginForm {
  /**
   * The server was started without an admin token (loopback only): any token or none is the
   * admin there, and the page says so rather than ask for a token nobody was given.
   */
  open: boolean;
  /** The page to go back to once signed in (a path of this site, see localPath). */
  next?: string;
  error?: string;
}

export function loginPage(
  res: ServerResponse,
  sessions: WebSessions,
  current: WebSession | undefined,
  { open, next, error }: LoginForm,
): void {
  // The form's own session carries its CSRF token; a signed-in person keeps theirs until signing in anew.
  const session = current ?? sessions.open(undefined);
  const body = html`
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="/login" class="card">
${csrfField(session)}
${next ? html`<input type="hidden" name="next" value="${next}">` : ""}
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
  const next = localPath(form.get("next") ?? undefined);
  // No token: the admin on an open server, no one on another.
  const principal = await authority.identify(token === "" ? undefined : token);
  if (!principal)
    return loginPage(res, sessions, current, {
      open: await isOpen(authority),
      next,
      error: "That token is not accepted: wrong, revoked or expired.",
    });
  sessions.close(current!);
  const session = sessions.open(token);
  redirect(res, next ?? "/", { "set-cookie": sessionCookie(session) });
}

/**
 * `value` when it is a path of this site to go back to after sign-in, else undefined: never
 * another site (`//host`, `/\host`, a URL), never the sign-in or sign-out pages themselves.
 */
export function localPath(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith("/") || value.startsWith("//") || /[\\\x00-\x1f\x7f]/.test(value)) return undefined;
  const { pathname, search, origin } = new URL(value, "http://web.invalid");
  if (origin !== "http://web.invalid" || pathname === "/login" || pathname === "/logout") return undefined;
  return pathname + search;
}

/** Was the server started without an admin token? Then a request with none is the admin. */
export async function isOpen(authority: Authority): Promise<boolean> {
  return (await authority.identify(undefined)) !== undefined;
}
