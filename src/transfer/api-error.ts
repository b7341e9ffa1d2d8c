/** How a request to the project API failed, classified for the retry policy and the user. */
import type { WireErrorCode } from "../api/errors.js";
import { errorText } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/** Failures named on this side: no answer, or one the client cannot take, or its own refusal. */
export type ClientFailureCode =
  "network" | "timeout" | "certificate" | "redirect" | "protocol" | "config" | "closed" | "unsupported" | "rewound";

declare const unlisted: unique symbol;
/**
 * A code a server sent that src/api/errors.ts does not list (another server's), kept as sent: a
 * string at run time, typed apart so that comparing a code with one in neither list is a type error.
 */
export type UnlistedCode = { readonly [unlisted]: "a code the API's list does not hold" };

/** An ApiError's code: the server's (listed or not), `http_<status>` for an answer without one, or ours. */
export type ApiErrorCode = WireErrorCode | ClientFailureCode | `http_${number}` | UnlistedCode;

/** Answers the sync expects and handles (a 409 is decided again, missing blobs are sent): no defect of ours. */
const HANDLED_CODES: ReadonlySet<ApiErrorCode> = new Set<WireErrorCode>(["conflict", "missing_blobs"]);

/**
 * Why a request failed. `retryable`: worth trying again (network, timeout, 408, 429, 5xx).
 * `fatal`: no point in any further request this session (401, 403, 404 project, redirect).
 */
export class ApiError extends UsparkError<ApiErrorCode> {
  override readonly name = "ApiError";
  readonly status: number | undefined;
  /** The server's error code (`missing_blobs`, `hash_mismatch`, …) or network / timeout / redirect / protocol. */
  readonly code: ApiErrorCode;
  readonly retryable: boolean;
  readonly fatal: boolean;
  readonly retryAfterMs: number | undefined;
  /** The parsed JSON error body, when there was one. */
  readonly body: Record<string, unknown> | undefined;

  constructor(
    message: string,
    info: {
      status?: number;
      code: ApiErrorCode;
      retryable?: boolean;
      fatal?: boolean;
      retryAfterMs?: number;
      body?: Record<string, unknown>;
      cause?: unknown;
    },
  ) {
    // A routine answer (retried, or handled as a 409 is) needs no stack trace: its message names the
    // request, its cause keeps the low-level one, and capturing it was most of the error's cost.
    const stackTraceLimit = Error.stackTraceLimit;
    if (info.retryable === true || HANDLED_CODES.has(info.code)) Error.stackTraceLimit = 0;
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.status = info.status;
    this.code = info.code;
    this.retryable = info.retryable ?? false;
    this.fatal = info.fatal ?? false;
    this.retryAfterMs = info.retryAfterMs;
    this.body = info.body;
  }
}

/** The server says two things that cannot both be true (`label`: the request that said the second): no retry can mend it. */
export function contradiction(why: string, label?: string): ApiError {
  return new ApiError(`${label ? `${label}: ` : ""}the server contradicts itself: ${why}`, { code: "protocol", fatal: true });
}

const TIMEOUT_CODES = new Set(["HEADERS_TIMEOUT", "BODY_TIMEOUT", "CONNECT_TIMEOUT", "ETIMEDOUT"]);

/** Node's codes for a server certificate that cannot be trusted: no retry changes them. */
const CERTIFICATE_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * A failure before or while the answer came: a timeout or a network error, both retryable; or a
 * certificate that cannot be trusted, fatal (waiting for the flush timeout would only hide it).
 */
export function networkError(label: string, error: unknown, timeoutMs: number): ApiError {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && CERTIFICATE_CODES.has(code)) {
    const why = error instanceof Error ? error.message : code;
    return new ApiError(
      `${label}: the server's certificate is not trusted (${code}: ${why}); if the server is yours, give Node its CA with NODE_EXTRA_CA_CERTS=<file>`,
      { code: "certificate", fatal: true, cause: error },
    );
  }
  if (typeof code === "string" && TIMEOUT_CODES.has(code)) {
    return new ApiError(`${label}: no answer within ${timeoutMs} ms`, { code: "timeout", retryable: true, cause: error });
  }
  const detail = typeof code === "string" ? code : errorText(error);
  return new ApiError(`${label}: network error (${detail})`, { code: "network", retryable: true, cause: error });
}
