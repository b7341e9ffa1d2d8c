import { get as httpGet } from "node:http";
import { afterEach } from "vitest";
import { startProxy, startRef, type Action, type Proxy, type RefServer, type SeenRequest } from "../sync/helpers.js";

/**
 * The transcript tests run against the reference server (startRef) behind the fault proxy
 * (startProxy): the faults are proxy rules, what was stored is read back from the server.
 */

/** An append: PUT /api/projects/{id}/sessions/{session}/events?offset=N. */
export const isTranscriptPut = (req: { method: string; url: string }) => req.method === "PUT" && /^\/api\/projects\/[^/]+\/sessions\/[^/]+\/events(\?|$)/.test(req.url);

/** Any request on the sessions routes (the listing, a transcript's events). */
export const isSessionsRoute = (req: { url: string }) => /^\/api\/projects\/[^/]+\/sessions(\/|\?|$)/.test(req.url);

/** The sessions routes answered 404 as a v1 server would (a fault-proxy rule); the rest is forwarded. */
export const v1Sessions = (req: SeenRequest): Action | undefined =>
  isSessionsRoute(req) ? { kind: "answer", status: 404, body: { error: "not_found", message: "no such route" } } : undefined;

/** What becomes of the n-th append (0-based) that reaches the proxy; undefined forwards it. */
export type PutRule = (n: number) => Action | undefined;

/**
 * A proxy rule applying `pick` to the appends, counted in the order they arrive; every other
 * request is forwarded. `taken` lists the action kind used for each append.
 */
export function onPuts(pick: PutRule): { rule: (req: SeenRequest) => Action | undefined; taken: Action["kind"][] } {
  const taken: Action["kind"][] = [];
  const rule = (req: SeenRequest) => {
    if (!isTranscriptPut(req)) return undefined;
    const action = pick(taken.length);
    taken.push(action?.kind ?? "forward");
    return action;
  };
  return { rule, taken };
}

/** The appends the proxy has received so far (faulted or not). */
export const putsSeen = (proxy: Proxy) => proxy.seen.filter(isTranscriptPut);

/** A 503 (or other status) made up by the proxy, with the server's error body. */
export const answer = (status: number, headers?: Record<string, string>): Action => ({ kind: "answer", status, headers, body: { error: "unavailable", message: "made up by the test proxy" } });

export interface StoredSession {
  id: string;
  /** The length the listing gives. */
  length: number;
  /** The bytes GET .../events gives. */
  bytes: Buffer;
}

/** Every session of the project as the server lists and serves it. */
export async function storedSessions(url: string, projectId = "p1", token?: string): Promise<StoredSession[]> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const base = `${url}/api/projects/${encodeURIComponent(projectId)}/sessions`;
  const listing = await fetch(base, { headers });
  if (listing.status !== 200) throw new Error(`GET ${base} answered ${listing.status}`);
  const { sessions } = (await listing.json()) as { sessions: { id: string; length: number }[] };
  const out: StoredSession[] = [];
  for (const { id, length } of sessions) {
    out.push({ id, length, bytes: await getBytes(`${base}/${encodeURIComponent(id)}/events`, headers) });
  }
  return out;
}

/**
 * A GET's body, answered 200. node:http rather than fetch: fetch took half again as much CPU for
 * a transcript of 160 MiB (the 160 MiB test of cli.test.ts reads one back).
 */
function getBytes(url: string, headers: Record<string, string>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (part: Buffer) => parts.push(part));
      res.on("error", reject);
      res.on("end", () => (res.statusCode === 200 ? resolve(Buffer.concat(parts)) : reject(new Error(`GET ${url} answered ${res.statusCode}`))));
    }).on("error", reject);
  });
}

export interface Served {
  ref: RefServer;
  proxy: Proxy;
}

/**
 * Registers an afterEach that stops what `serve()` started; `serve()` starts, for the calling
 * test, a reference server (its own data dir, port 0) and a fault proxy in front of it (port 0).
 */
export function useServed(): (options?: { token?: string; rule?: (req: SeenRequest) => Action | undefined }) => Promise<Served> {
  const started: Served[] = [];
  afterEach(async () => {
    for (const { ref, proxy } of started.splice(0)) {
      await proxy.close();
      await ref.stop();
    }
  });
  return async (options = {}) => {
    const ref = await startRef(options.token);
    try {
      const proxy = await startProxy(ref.url, options.rule);
      started.push({ ref, proxy });
      return { ref, proxy };
    } catch (error) {
      await ref.stop();
      throw error;
    }
  };
}
