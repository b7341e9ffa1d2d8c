// Web sessions (design.md §2e): a random id in an HttpOnly SameSite=Strict cookie, the token kept
// here on the server (never in the cookie, never in a URL), and a CSRF token for every POST form.

import { randomBytes, timingSafeEqual } from "node:crypto";

export const COOKIE_NAME = "uspark_session";
/** A session unused this long is forgotten (a person signs in again). */
const IDLE_MS = 12 * 60 * 60 * 1000;
/** Bounds the map against a client that opens sessions in a loop (the oldest is dropped). */
const MAX_SESSIONS = 10_000;

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

  constructor(private readonly now: () => number = Date.now) {}

  /** A new session (a new id: signing in never keeps the id the browser had before). */
  open(token: string | undefined): WebSession {
    const session: WebSession = { id: randomId(), csrf: randomId(), token, lastSeen: this.now() };
    this.byId.set(session.id, session);
    if (this.byId.size > MAX_SESSIONS) this.byId.delete(this.byId.keys().next().value!);
    return session;
  }

  /** The session whose id the request's cookie carries, if it is still alive. */
  find(cookieHeader: string | undefined): WebSession | undefined {
    const id = cookieValue(cookieHeader, COOKIE_NAME);
    const session = id === undefined ? undefined : this.byId.get(id);
    if (!session) return undefined;
    if (this.now() - session.lastSeen > IDLE_MS) {
      this.byId.delete(session.id);
      return undefined;
    }
    session.lastSeen = this.now();
    return session;
  }

  close(session: WebSession): void {
    this.byId.delete(session.id);
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
