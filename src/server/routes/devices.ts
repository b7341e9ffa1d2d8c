// `POST /api/device/code` and `POST /api/device/token` (RFC 8628 §3.1-3.5): no bearer token, the
// device has none yet. Bodies are form-encoded as the RFC says; JSON is taken too.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { WireErrorCodeWith } from "../../api/errors.js";
import { DEVICE_CODE_GRANT } from "../../api/types.js";
import { validateProjectId } from "../../api/validate.js";
import type { DeviceRequest } from "../authority.js";
import type { DeviceFlow } from "../device.js";
import { HttpError, readAll, sendJson } from "../http.js";

/** A device request carries a code and a grant type: anything longer is not one. */
const MAX_BODY_BYTES = 16 * 1024;

const ERROR_TEXT: Record<string, string> = {
  authorization_pending: "waiting for a person to approve this login on the server's /device page",
  slow_down: "polling too fast: wait the interval, now 5 seconds longer",
  access_denied: "the login was denied",
  expired_token: "the code expired before it was approved: start again",
  invalid_grant: "unknown or used device code",
};

export async function postDeviceCode(req: IncomingMessage, res: ServerResponse, devices: DeviceFlow): Promise<void> {
  // A client_id may come; every client is the same here. What the device asks for only fills in the approval form.
  const answer = await devices.start(`${originOf(req)}/device`, deviceRequestOf(await readForm(req)));
  if (!answer)
    throw new HttpError(429, "slow_down", "too many logins are waiting for approval: try again in a minute", {}, { "retry-after": "60" });
  sendJson(res, 200, answer);
}

export async function postDeviceToken(req: IncomingMessage, res: ServerResponse, devices: DeviceFlow): Promise<void> {
  const body = await readForm(req);
  if (body.get("grant_type") !== DEVICE_CODE_GRANT) {
    throw oauthError("unsupported_grant_type", `grant_type must be ${DEVICE_CODE_GRANT}`);
  }
  const deviceCode = body.get("device_code");
  if (!deviceCode) throw oauthError("invalid_request", "device_code is missing");
  const answer = await devices.poll(deviceCode);
  if (answer.kind === "error") throw oauthError(answer.error, ERROR_TEXT[answer.error]!);
  const { spec } = answer;
  sendJson(res, 200, {
    access_token: answer.secret,
    token_type: "Bearer",
    scope: spec.access,
    projects: spec.projects,
    ...(spec.expires === undefined ? {} : { expires_in: Math.max(0, Math.floor((spec.expires - Date.now()) / 1000)) }),
  });
}

/** Projects a device may propose: more are left out (a person ticks the rest). */
const MAX_ASKED_PROJECTS = 20;
const MAX_HOST_NAME = 253;

/**
 * What the device asks for (`project` repeated, `scope` read or write as RFC 8628 §3.1 names it,
 * `host`): anything malformed is left out, never refused, since the person approving decides.
 */
export function deviceRequestOf(form: URLSearchParams): DeviceRequest | undefined {
  const projects = form
    .getAll("project")
    .filter((id) => validateProjectId(id) === undefined)
    .slice(0, MAX_ASKED_PROJECTS);
  const scope = form.get("scope");
  const host = form.get("host")?.trim();
  const asked: DeviceRequest = { projects: [...new Set(projects)] };
  if (scope === "read" || scope === "write") asked.access = scope;
  if (host && host.length <= MAX_HOST_NAME && !/[\u0000-\u001f\u007f]/.test(host)) asked.host = host;
  return asked.projects.length > 0 || asked.access || asked.host ? asked : undefined;
}

/** The server as the device reached it: the /device page must be on the same address. */
function originOf(req: IncomingMessage): string {
  const host = req.headers.host ?? "";
  if (!/^[A-Za-z0-9.\-:[\]]+$/.test(host)) throw new HttpError(400, "invalid_request", "missing or malformed Host header");
  // Behind a TLS-terminating proxy the connection is plain, the address the device used is not.
  const https = req.headers["x-forwarded-proto"] === "https" || "encrypted" in req.socket;
  return `${https ? "https" : "http"}://${host}`;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const text = (await readAll(req, MAX_BODY_BYTES)).toString("utf8");
  if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) return new URLSearchParams(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw oauthError("invalid_request", "body is not valid JSON");
  }
  const fields = typeof parsed === "object" && parsed !== null ? Object.entries(parsed) : [];
  return new URLSearchParams(fields.filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}

/** RFC 6749 §5.2: 400 with `error` (and its description, under both names clients read). */
function oauthError(code: WireErrorCodeWith<400>, description: string): HttpError {
  return new HttpError(400, code, description, { error_description: description });
}
