// The one check of every identifier a request carries (project, session, version, path, blob
// address) before it touches a file name or a query: the API's routes, its query parameters, the
// web view's pages and its live poll all ask here, and ProjectAccess asks again.

import type { WireErrorCodeWith } from "../api/errors.js";
import { isSha256, validateProjectId, validateProjectPath, validateSessionId } from "../api/validate.js";
import { HttpError } from "./http.js";

export type IdentifierKind = "project" | "session" | "version" | "path" | "blob";

/** A version: a non-negative integer of at most 15 digits (safe in a double, in a bigint column). */
const VERSION = /^\d{1,15}$/;

/** Why `value` is not a valid identifier of its kind, or undefined (pure). */
export function identifierProblem(kind: IdentifierKind, value: string): string | undefined {
  if (typeof value !== "string") return `${kind} must be a string`;
  switch (kind) {
    case "project":
      return validateProjectId(value);
    case "session":
      return validateSessionId(value);
    case "path":
      return validateProjectPath(value);
    case "blob":
      return isSha256(value) ? undefined : "blob address must be 64 lowercase hex characters";
    case "version":
      return VERSION.test(value) ? undefined : "version must be a non-negative integer";
  }
}

const ERROR_CODES: Record<IdentifierKind, WireErrorCodeWith<400>> = {
  project: "invalid_project_id",
  session: "invalid_request",
  path: "invalid_path",
  blob: "invalid_request",
  version: "invalid_request",
};

/** `value`, or a 400 naming what is wrong with it. */
export function checkIdentifier(kind: IdentifierKind, value: string, name: string = kind): string {
  const problem = identifierProblem(kind, value);
  if (problem === undefined) return value;
  const extra = kind === "path" ? { path: value } : {};
  throw new HttpError(400, ERROR_CODES[kind], kind === "path" ? `${name}: ${problem}` : problem, extra);
}
