// Which requests a server answers at all (docs/api.md, "Host and Origin"): only those addressed to
// a name it serves, so that a page of a rebound DNS name cannot read it, and no cross-site
// request that changes something, so that a page the developer opens cannot write to it. Checked
// before anything else, on every server, with a token or without.

import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { API_ERRORS } from "../api/types.js";
import { HttpError, sendError } from "./http.js";
import { html } from "./web/html.js";
import { page, sendPage } from "./web/layout.js";

/** The names given with --public-url and --allowed-host (the loopback names and the bound address need none). */
export interface ServedNames {
  /** Hosts as a Host header writes them (lowercase, a port only when not the scheme's default). */
  exact: ReadonlySet<string>;
  /** Host names served on any port (--allowed-host without one). */
  anyPort: ReadonlySet<string>;
}

/** Where a connection came in: the server's own address and port on it. */
export interface Arrival {
  localAddress: string;
  localPort: number;
}

export interface Asked {
  method: string;
  host: string | undefined;
  origin: string | undefined;
  /** The Sec-Fetch-Site header: a browser's word on where the request comes from. */
  fetchSite: string | undefined;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** What a browser may send without a page's script or form of another site behind it. */
const OWN_FETCH_SITES = new Set(["same-origin", "none"]);
const HOST_SHAPE = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/;

/** The names of --public-url and every --allowed-host; throws a RangeError naming a bad one. */
export function servedNames(publicUrl: string | undefined, allowedHosts: readonly string[] = []): ServedNames {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  if (publicUrl !== undefined) {
    const url = parsedPublicUrl(publicUrl);
    exact.add(url.host);
    if (url.port === "") exact.add(`${url.host}:${url.protocol === "https:" ? 443 : 80}`);
  }
  for (const given of allowedHosts) {
    const host = hostOf(given);
    if (!host) throw new RangeError(`--allowed-host ${JSON.stringify(given)} is not a host name (name or name:port)`);
    if (host.port === undefined) anyPort.add(host.hostname);
    else exact.add(writtenHost(host.hostname, host.port));
  }
  return { exact, anyPort };
}

function parsedPublicUrl(given: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {
    url = undefined;
  }
  const bare =
    url &&
    /^https?:$/.test(url.protocol) &&
    url.username === "" &&
    url.password === "" &&
    url.pathname === "/" &&
    url.search === "" &&
    url.hash === "";
  if (!url || !bare)
    throw new RangeError(
      `--public-url ${JSON.stringify(given)} must be an http:// or https:// URL without a path, e.g. https://uspark.example.com`,
    );
  return url;
}

/** Why this request is not answered, or undefined when it is: a Host not served (421), or a cross-site change (403). */
export function refusalOf(asked: Asked, arrival: Arrival, names: ServedNames): HttpError | undefined {
  if (!isServed(asked.host, arrival, names, "any")) {
    const shown = JSON.stringify((asked.host ?? "").slice(0, 100));
    return new HttpError(
      421,
      API_ERRORS.misdirectedRequest,
      `this server does not answer to the name ${shown}: it serves localhost and its own address; under another name (a proxy in front), start it with --public-url <url> or --allowed-host <name> (uspark serve --help)`,
    );
  }
  if (asked.method === "GET" || asked.method === "HEAD" || !isCrossSite(asked, arrival, names)) return undefined;
  return new HttpError(
    403,
    API_ERRORS.crossSiteRequest,
    "a request from another site may not change anything here: use this server's own pages, or a client that is not a browser",
  );
}

/**
 * Does a browser say this request comes from another site? Its Sec-Fetch-Site when it sends one
 * (our own forms come with Origin "null": the pages' Referrer-Policy is no-referrer); else its
 * Origin; neither: not a browser (the CLI).
 */
function isCrossSite({ origin, fetchSite }: Asked, arrival: Arrival, names: ServedNames): boolean {
  if (fetchSite !== undefined) return !OWN_FETCH_SITES.has(fetchSite.toLowerCase());
  return origin !== undefined && !isServed(hostOfOrigin(origin), arrival, names);
}

/**
 * Is `host` (a Host header, or an Origin's host) a name this server answers to on this connection?
 * Its own names (loopback, the address the connection came in on) are served on any port in a Host
 * (`ownPorts` "any": a proxy in front on another port, a TLS terminator; a rebound DNS name is
 * never one of them), and only at the server's own port in an Origin (another local port is
 * another site: a dev server's page).
 */
export function isServed(host: string | undefined, arrival: Arrival, names: ServedNames, ownPorts: "any" | "own" = "own"): boolean {
  const parsed = host === undefined ? undefined : hostOf(host);
  if (!parsed) return false;
  const { hostname, port } = parsed;
  if (names.anyPort.has(hostname) || names.exact.has(writtenHost(hostname, port))) return true;
  const own = LOOPBACK_NAMES.has(hostname) || hostname === hostOf(addressAsHost(arrival.localAddress))?.hostname;
  // The server speaks plain HTTP: a Host without a port asks for port 80.
  return own && (ownPorts === "any" || (port ?? 80) === arrival.localPort);
}

/** A Host header's name (lowercase, IP addresses in their one spelling) and the port it writes, if any. */
function hostOf(value: string): { hostname: string; port: number | undefined } | undefined {
  const shape = HOST_SHAPE.exec(value);
  if (!shape) return undefined;
  try {
    const url = new URL(`http://${value}`);
    const written = shape[2] === undefined ? undefined : Number(shape[2].slice(1));
    return { hostname: url.hostname, port: written };
  } catch {
    return undefined;
  }
}

function hostOfOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return /^https?:$/.test(url.protocol) ? url.host : undefined;
  } catch {
    return undefined; // "null": a sandboxed frame, a file:// page
  }
}

function writtenHost(hostname: string, port: number | undefined): string {
  return port === undefined ? hostname : `${hostname}:${port}`;
}

/** A socket's local address as a Host names it: an IPv4 address mapped into IPv6 as itself, IPv6 in brackets. */
function addressAsHost(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  return isIP(address) === 6 ? `[${address}]` : address;
}

/** The URLs answered in JSON (the API and the probes); every other one is the web view's. */
export function isApiUrl(url: string): boolean {
  return /^\/(healthz|readyz|api)(\/|\?|$)/.test(url);
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** `handler`, behind the check: a refused request is answered here (JSON for the API, a page for the web view). */
export function guardRequests(names: ServedNames, handler: Handler): Handler {
  return (req, res) => {
    const { origin, host, "sec-fetch-site": fetchSite } = req.headers;
    const arrival = { localAddress: req.socket.localAddress ?? "", localPort: req.socket.localPort ?? 0 };
    const refusal = refusalOf(
      { method: req.method ?? "GET", host, origin, fetchSite: typeof fetchSite === "string" ? fetchSite : undefined },
      arrival,
      names,
    );
    if (!refusal) return handler(req, res);
    if (isApiUrl(req.url ?? "/")) return sendError(res, refusal);
    const title = refusal.status === 421 ? "Not served under this name" : "Refused";
    sendPage(res, refusal.status, page({ title, body: html`<p class="error">${refusal.message}</p>` }));
  };
}
