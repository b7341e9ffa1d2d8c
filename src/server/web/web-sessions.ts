// Web sessions (docs/web-view.md#how-it-is-kept-safe): a random id in an HttpOnly SameSite=Strict
// cookie, the token kept here on the server (never in the cookie, never in a URL), and a CSRF token
// for every POST form.

import { randomBytes, timingSafeEqual } from "node:crypto";

export const COOKIE_NAME = "uspark_session";
/** A session unused this long is forgotten (a person signs in again). */
const IDLE_MS = 12 * 60 * 60 * 1000;
/** Bounds the signed-in sessions (past it, one of the token holding the most is dropped). */
const MAX_SESSIONS = 10_000;
/**
 * Bounds one token's signed-in sessions (its own oldest is dropped past it): a person signs in from
 * a few browsers, and a token holder signing in in a loop must only ever push out their own.
 */
export const MAX_SESSIONS_PER_TOKEN = 100;
/**
 * Bounds the login forms' sessions apart: anyone may open those (GET /login) in a loop, and that
 * must never push a signed-in person out.
 */
const MAX_FORM_SESSIONS = 1_000;

export interface WebSession {
  readonly id: string;
  readonly csrf: string;
  /** The token this session signed in with; undefined before sign-in (the login form's session). */
  readonly token: string | undefined;
  lastSeen: number;
}

function randomId(): string {
  return randomBytes(32).toString("base64url");
}

export class WebSessions {
  private readonly byId = new Map<string, WebSession>();
  /** The ids of sessions not signed in, oldest first. */
  private readonly formIds = new Set<string>();
  /** The ids of each token's signed-in sessions, oldest first. */
  private readonly byToken = new Map<string, Set<string>>();
  private signedIn = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** A new session (a new id: signing in never keeps the id the browser had before). */
  open(token: string | undefined): WebSession {
    const session: WebSession = { id: randomId(), csrf: randomId(), token, lastSeen: this.now() };
    if (token === undefined) {
      this.byId.set(session.id, session);
      this.formIds.add(session.id);
      if (this.formIds.size > MAX_FORM_SESSIONS) this.close(this.byId.get(this.formIds.values().next().value!)!);
      return session;
    }
    const own = this.byToken.get(token);
    if ((own?.size ?? 0) >= MAX_SESSIONS_PER_TOKEN) this.closeOldestOf(own!);
    else if (this.signedIn >= MAX_SESSIONS) this.closeOldestOf(this.largestHolding());
    this.byId.set(session.id, session);
    if (!this.byToken.has(token)) this.byToken.set(token, new Set());
    this.byToken.get(token)!.add(session.id);
    this.signedIn++;
    return session;
  }

  /** The session whose id the request's cookie carries, if it is still alive. */
  find(cookieHeader: string | undefined): WebSession | undefined {
    const id = cookieValue(cookieHeader, COOKIE_NAME);
    const session = id === undefined ? undefined : this.byId.get(id);
    if (!session) return undefined;
    if (this.now() - session.lastSeen > IDLE_MS) {
      this.close(session);
      return undefined;
    }
    session.lastSeen = this.now();
    return session;
  }

  close(session: WebSession): void {
    if (!this.byId.delete(session.id)) return;
    this.formIds.delete(session.id);
    const own = session.token === undefined ? undefined : this.byToken.get(session.token);
    if (!own?.delete(session.id)) return;
    this.signedIn--;
    if (own.size === 0) this.byToken.delete(session.token!);
  }

  private closeOldestOf(ids: Set<string>): void {
    this.close(this.byId.get(ids.values().next().value!)!);
  }

  /** The sessions of the token that holds the most (a few hundred tokens at most to look through when full). */
  private largestHolding(): Set<string> {
    let largest = new Set<string>();
    for (const ids of this.byToken.values()) if (ids.size > largest.size) largest = ids;
    return largest;
  }
}

/** The Set-Cookie value that gives the browser `session`'s id, or (undefined) removes it. */
export function sessionCookie(session: WebSession | undefined): string {
  const attributes = "Path=/; HttpOnly; SameSite=Strict";
  return session ? `${COOKIE_NAME}=${session.id}; ${attributes}` : `${COOKIE_NAME}=; ${attributes}; Max-Age=0`;
}

/** Does the form's CSRF field match the session's (in constant time)? */
export function csrfMatches(session: WebSession, sent: string | undefined): boolean {
  const expected = Buffer.from(session.csrf);
  const given = Buffer.from(sent ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
