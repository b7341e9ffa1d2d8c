// Web sessions: ids, idle expiry, and the bounds that keep a flood of login forms from signing anyone out.

import { describe, expect, it } from "vitest";
import { COOKIE_NAME, csrfMatches, sessionCookie, WebSessions } from "../../../src/server/web/web-sessions.js";

const cookieOf = (id: string) => `other=1; ${COOKIE_NAME}=${id}`;

describe("WebSessions", () => {
  it("keeps a signed-in session while login forms are opened in a loop", () => {
    const sessions = new WebSessions();
    const signedIn = sessions.open("token");
    for (let i = 0; i < 20_000; i++) sessions.open(undefined);
    expect(sessions.find(cookieOf(signedIn.id))).toBe(signedIn);
  });

  it("keeps the admin signed in however many sessions another token opens (the cap evicts the signer's own first)", () => {
    const sessions = new WebSessions();
    const admin = sessions.open("admin-token");
    for (let i = 0; i < 10_050; i++) sessions.open("another-token");
    expect(sessions.find(`${COOKIE_NAME}=${admin.id}`)).toBe(admin);
    const latest = sessions.open("another-token");
    expect(sessions.find(`${COOKIE_NAME}=${latest.id}`)).toBe(latest);
  });

  it("forgets a session idle for 12 hours, and one closed", () => {
    let now = 0;
    const sessions = new WebSessions(() => now);
    const idle = sessions.open("token");
    const closed = sessions.open("token");
    sessions.close(closed);
    now = 12 * 60 * 60 * 1000 + 1;
    expect(sessions.find(cookieOf(idle.id))).toBeUndefined();
    expect(sessions.find(cookieOf(closed.id))).toBeUndefined();
  });

  it("gives the browser the id only, HttpOnly and SameSite=Strict, and checks CSRF tokens exactly", () => {
    const session = new WebSessions().open("the-token");
    expect(sessionCookie(session)).toBe(`${COOKIE_NAME}=${session.id}; Path=/; HttpOnly; SameSite=Strict`);
    expect(sessionCookie(session)).not.toContain("the-token");
    expect(csrfMatches(session, session.csrf)).toBe(true);
    expect(csrfMatches(session, session.csrf.slice(1))).toBe(false);
    expect(csrfMatches(session, undefined)).toBe(false);
  });
});
