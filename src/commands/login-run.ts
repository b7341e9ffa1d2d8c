// `uspark login` and `uspark logout` (docs/access.md#device-login): the device flow of RFC 8628 against the
// server, the token saved for that server alone in ~/.uspark/config.json (mode 0600). Nothing is
// opened: the code and the address are said on stderr, a person approves them on the server's
// /device page, wherever they are.

import os from "node:os";
import { DEVICE_CODE_GRANT, SLOW_DOWN_SECONDS } from "../api/types.js";
import { homeConfigPath, normalizeApiUrl, resolveServer, updateHomeConfig, UsageError } from "../config/config.js";
import { EXIT } from "../util/exit-codes.js";
import { Reporter } from "../report/reporter.js";
import { failureReason } from "../transfer/retry.js";
import { homeConfig, rememberChoice } from "./kit/connection.js";
import { exit, usageFailure } from "./kit/exit.js";
import { errorText } from "../errors/text.js";

const REQUEST_TIMEOUT_MS = 30_000;

interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

/** What to do after a poll's answer (pure). */
export type PollStep =
  { kind: "wait"; interval: number } | { kind: "token"; token: string; scope: string } | { kind: "fail"; message: string };

export function afterPoll(status: number, body: Record<string, unknown>, interval: number): PollStep {
  if (status === 200 && typeof body.access_token === "string") {
    const projects = Array.isArray(body.projects) ? body.projects.join(", ") : "";
    return { kind: "token", token: body.access_token, scope: `${String(body.scope)} on ${projects}` };
  }
  switch (body.error) {
    case "authorization_pending":
      return { kind: "wait", interval };
    case "slow_down":
      return { kind: "wait", interval: interval + SLOW_DOWN_SECONDS };
    case "access_denied":
      return { kind: "fail", message: "the login was denied on the server" };
    case "expired_token":
      return { kind: "fail", message: "the code expired before it was approved: run uspark login again" };
    default:
      return { kind: "fail", message: `the server answered ${status}${typeof body.error === "string" ? ` ${body.error}` : ""}` };
  }
}

/** What login and logout read of their flags (declared once in login.ts, which the compiler checks against this). */
export interface LoginRequest {
  apiUrl?: string;
  insecure?: true;
  project?: string[];
  scope?: "read" | "write";
}

export async function runLoginCommand(flags: LoginRequest): Promise<void> {
  const report = new Reporter();
  let apiUrl: string;
  try {
    const home = homeConfig(report);
    apiUrl = resolveServer({ apiUrl: flags.apiUrl, insecure: flags.insecure }, process.env, home).apiUrl;
    rememberChoice(flags, apiUrl, home, report);
  } catch (error) {
    return usageFailure(report, error);
  }
  // A server that lists projects to a request without a token was started without one.
  const open = await fetch(`${apiUrl}/api/projects`, { redirect: "error", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
    (res) => res.status === 200,
    (error: Error) => error,
  );
  if (open instanceof Error) return fail(report, `cannot reach ${apiUrl}: ${failureReason(open)}`);
  if (open) {
    report.info("login", `${apiUrl} was started without a token: uspark needs none there, nothing to log in for`);
    return exit(EXIT.ok);
  }
  const started = await post(`${apiUrl}/api/device/code`, deviceCodeRequest(flags, os.hostname())).catch((error: Error) => error);
  if (started instanceof Error) return fail(report, `cannot reach ${apiUrl}: ${failureReason(started)}`);
  if (started.status === 404 || started.status === 405) {
    return usageFailure(
      report,
      new UsageError(`${apiUrl} has no device login`, "pass a token with --token or USPARK_TOKEN instead (a server older than uspark 0.3)"),
    );
  }
  const code = started.body as unknown as DeviceCode;
  if (started.status !== 200 || typeof code.device_code !== "string")
    return fail(report, `${apiUrl} answered ${started.status} to the device code request`);
  report.info(
    "login",
    `open ${code.verification_uri} and enter the code ${code.user_code} (or open ${code.verification_uri_complete ?? code.verification_uri}); waiting for approval`,
  );

  const outcome = await pollUntilDone(apiUrl, code, report);
  if (outcome.kind === "fail") return fail(report, outcome.message);
  const file = homeConfigPath();
  try {
    updateHomeConfig(file, (config) => {
      config.servers = { ...asObject(config.servers), [apiUrl]: { token: outcome.token } };
      // The first server logged in to becomes the default: `uspark push` then needs no --api-url.
      config.apiUrl ??= apiUrl;
    });
  } catch (error) {
    return fail(report, `cannot save the token in ${file}: ${errorText(error)}`);
  }
  new Reporter({ secrets: [outcome.token] }).info(
    "login",
    `logged in to ${apiUrl} (${outcome.scope}); the token is saved in ${file}, readable by you alone`,
  );
  exit(EXIT.ok);
}

export async function runLogoutCommand(flags: LoginRequest): Promise<void> {
  const report = new Reporter();
  const file = homeConfigPath();
  try {
    const home = homeConfig(report);
    const { apiUrl } = resolveServer({ apiUrl: flags.apiUrl, insecure: flags.insecure }, process.env, home);
    if (!home.servers?.[apiUrl]) {
      report.info("logout", `not logged in to ${apiUrl}: nothing to remove`);
      return exit(EXIT.ok);
    }
    updateHomeConfig(file, (config) => {
      const servers = asObject(config.servers);
      for (const url of Object.keys(servers)) if (normalizeApiUrl(url) === apiUrl) delete servers[url];
      if (Object.keys(servers).length === 0) delete config.servers;
      else config.servers = servers;
    });
    report.info("logout", `logged out of ${apiUrl}: its token is removed from ${file} (it stays valid on the server until revoked)`);
    exit(EXIT.ok);
  } catch (error) {
    usageFailure(report, error);
  }
}

/** The device code request: what this login asks for and which machine asks (the approval page shows both; older servers ignore them). */
export function deviceCodeRequest(flags: Pick<LoginRequest, "project" | "scope">, host: string): URLSearchParams {
  const form = new URLSearchParams({ client_id: "uspark" });
  for (const project of flags.project ?? []) form.append("project", project);
  if (flags.scope) form.set("scope", flags.scope);
  if (host) form.set("host", host);
  return form;
}

/** Polls at the interval until a token, a refusal, or the code's expiry; a network failure is tried again. */
async function pollUntilDone(apiUrl: string, code: DeviceCode, report: Reporter): Promise<Exclude<PollStep, { kind: "wait" }>> {
  const deadline = Date.now() + code.expires_in * 1000;
  let interval = code.interval ?? 5;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    const answer = await post(
      `${apiUrl}/api/device/token`,
      new URLSearchParams({ grant_type: DEVICE_CODE_GRANT, device_code: code.device_code }),
    ).catch((error: Error) => error);
    if (answer instanceof Error) {
      report.warnOnce("login-poll", "login", `cannot reach ${apiUrl} (${failureReason(answer)}); trying again`);
      continue;
    }
    const step = afterPoll(answer.status, answer.body, interval);
    if (step.kind !== "wait") return step;
    interval = step.interval;
  }
  return { kind: "fail", message: "the code expired before it was approved: run uspark login again" };
}

async function post(url: string, form: URLSearchParams): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { method: "POST", body: form, redirect: "error", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const body = (await res.json().catch(() => ({}))) as unknown;
  return { status: res.status, body: asObject(body) };
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? { ...(value as Record<string, unknown>) } : {};
}

function fail(report: Reporter, message: string): void {
  report.error("login", message);
  exit(EXIT.notSynced);
}
