/**
 * Every `error` code of the API's JSON error bodies (docs/api.md#error-codes), with the statuses it
 * comes with and what it means: the one list the server answers from (src/server/http.ts's
 * HttpError takes no other code) and the client reads (src/transfer/api-error.ts). The table in
 * docs/api.md is made from it (`npm run docs`), and a test keeps the two equal.
 *
 * Runtime code imports the types only: the meanings stay out of the CLI's start-up bundle.
 */
export const WIRE_ERRORS = {
  unauthorized: { status: [401], meaning: "no, a malformed, an unknown, a revoked or an expired token" },
  forbidden: { status: [403], meaning: "a project outside the token's scope, a write with a read token, or an admin-only request" },
  misdirected_request: { status: [421], meaning: "the Host is not a name the server serves (Host and Origin)" },
  cross_site_request: { status: [403], meaning: "a browser's request from another site that would change something" },
  csrf: { status: [403], meaning: "a web view form that expired or came from another site" },
  project_not_found: { status: [404], meaning: "a project never created" },
  invalid_project_id: { status: [400], meaning: "a project id that is not one" },
  exists: { status: [409], meaning: "`POST /api/projects`: the project exists already" },
  version_not_found: { status: [404], meaning: "`GET /files?version=N` past the head" },
  gone: { status: [410], meaning: "`GET /files?version=N`: the server no longer keeps that version" },
  conflict: {
    status: [409],
    meaning: "an expectation of the commit failed, or it would leave a path a file and a directory; nothing applied",
  },
  missing_blobs: { status: [422], meaning: "the commit names blobs the project does not hold (`missing`): upload them and commit again" },
  idempotency_key_reused: { status: [422], meaning: "an `Idempotency-Key` sent again with a different body" },
  invalid_path: { status: [400], meaning: "a project path that is not one (`path`)" },
  invalid_request: { status: [400], meaning: "a body, parameter or header that is not what the route takes" },
  invalid_json: { status: [400], meaning: "a body that is not JSON" },
  invalid_multipart: { status: [400], meaning: "a `POST /blobs` body that is not multipart with parts named by their SHA-256" },
  hash_mismatch: { status: [400], meaning: "a blob whose bytes have another SHA-256 than its name (`sha256`)" },
  too_large: { status: [413], meaning: "a body, or the answer asked for, over the server's limit" },
  blob_not_found: { status: [404], meaning: "`GET /blobs/{sha256}`: a blob the project does not hold" },
  not_found: { status: [404], meaning: "no such route or page; `POST /blobs/get`: blobs the project does not hold (`missing`)" },
  session_not_found: { status: [404], meaning: "`GET /sessions/{sessionId}/events`: no transcript for that session" },
  offset_mismatch: { status: [409], meaning: "a transcript append at another offset than its length (`length`)" },
  method_not_allowed: { status: [405], meaning: "a method the route does not list" },
  unsupported_media_type: { status: [415], meaning: "a web view form not sent as `application/x-www-form-urlencoded`" },
  slow_down: { status: [429, 400], meaning: "too many logins waiting (429), or a device poll sooner than its interval (400)" },
  authorization_pending: { status: [400], meaning: "a device poll before a person approved the login" },
  access_denied: { status: [400], meaning: "a device poll of a denied login" },
  expired_token: { status: [400], meaning: "a device poll of a login that expired unanswered" },
  invalid_grant: { status: [400], meaning: "a device poll with an unknown or used device code" },
  unsupported_grant_type: { status: [400], meaning: "a device poll whose `grant_type` is not the device code's" },
  not_ready: { status: [503], meaning: "`GET /readyz`: the server cannot serve yet (with `Retry-After`)" },
  unavailable: { status: [503], meaning: "the store cannot be reached now (with `Retry-After`)" },
  project_unavailable: { status: [500], meaning: "a project whose data is damaged" },
  internal: { status: [500], meaning: "an unexpected error of the server" },
} as const satisfies Record<string, { status: readonly number[]; meaning: string }>;

/** A code of the API's error bodies: any other is a type error on either side. */
export type WireErrorCode = keyof typeof WIRE_ERRORS;

/** The statuses `code` is sent with. */
export type WireErrorStatus<C extends WireErrorCode> = (typeof WIRE_ERRORS)[C]["status"][number];

/** The codes sent with status `S` (400: the codes of a bad request). */
export type WireErrorCodeWith<S extends number> = { [C in WireErrorCode]: S extends WireErrorStatus<C> ? C : never }[WireErrorCode];
