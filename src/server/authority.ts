// Who a request is and what it may do (docs/access.md#tokens-and-scopes): the one place the API and the web view ask.

import { createHash } from "node:crypto";

export type Access = "read" | "write";

/** Whoever holds a token the server accepts. */
export type Principal =
  /**
   * The admin token (`--token`, `USPARK_SERVE_TOKEN`); on a server started without one (loopback
   * only), anyone but the holder of a scoped token the store knows (see credentialAuthority).
   */
  | { kind: "admin" }
  /** A token made by `uspark serve token create`: some projects, read or write. */
  | {
      kind: "scoped";
      tokenId: string;
      /** SHA-256 of its secret: the token is read again by it where a step must know it still holds. */
      tokenHash: string;
      access: Access;
      projects: readonly string[];
      /** Epoch ms: the earliest of its own expiry and its parents'. */
      expires?: number;
    };

export interface Authority {
  /**
   * Who holds `token` now, or undefined when it is absent, unknown, revoked or expired. Asked at
   * every request, so a revoked token is refused at once.
   */
  identify(token: string | undefined): Promise<Principal | undefined>;
}

/** May `principal` read (GET, HEAD) or write the project `projectId`? */
export function mayAccess(principal: Principal, projectId: string, access: Access): boolean {
  if (principal.kind === "admin") return true;
  if (access === "write" && principal.access !== "write") return false;
  return principal.projects.includes(projectId);
}

/** May `principal` create projects and manage tokens? */
export function isAdmin(principal: Principal): boolean {
  return principal.kind === "admin";
}

/** The token in `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(.+?) *$/i.exec(header ?? "");
  return match?.[1];
}

export function sha256Of(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** What a device login (RFC 8628, `uspark login`) is granted when a person approves it. */
export interface Grant {
  projects: readonly string[];
  access: Access;
}

/** What a device asks for when it starts a login (`uspark login --project … --scope …`, its host name): the approval page fills its form in with it, the person decides. */
export interface DeviceRequest {
  projects: string[];
  access?: Access;
  host?: string;
}

/** Device logins waiting for a person's approval on the web view's `/device` page. */
export interface DeviceLogins {
  /** The waiting login with this user code (case and separators as a person types them), or undefined. */
  find(userCode: string): Promise<{ userCode: string; expiresAt: number; asked?: DeviceRequest } | undefined>;
  /**
   * Approves it: the device's next poll gets a new token with `grant`, which must lie within what
   * `by` may do now (a revoked or expired token approves nothing), a child of `by`'s token.
   */
  approve(userCode: string, grant: Grant, by: Principal): Promise<"approved" | "unknown" | "forbidden">;
  /** Denies it: only who could approve any login may (see mayDeny). */
  deny(userCode: string, by: Principal): Promise<"denied" | "unknown" | "forbidden">;
}
