import { get as httpGet } from "node:http";
import { afterEach } from "vitest";
import { startMemoryRef, startProxy, type Action, type Proxy, type ProxyOptions, type RefServer, type SeenRequest } from "./sync.js";

/**
 * The transcript tests run against the reference server (startMemoryRef: its data on tmpfs, as
 * they never look at its files) behind the fault proxy (startProxy): the faults are proxy rules,
 * what was stored is read back from the server.
 */

/** An append: PUT /api/projects/{id}/sessions/{session}/events?offset=N. */
export const isTranscriptPut = (req: { method: string; url: string }) =>
  req.method === "PUT" && /^\/api\/projects\/[^/]+\/sessions\/[^/]+\/events(\?|$)/.test(req.url);

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
export const answer = (status: number, headers?: Record<string, string>): Action => ({
  kind: "answer",
  status,
  headers,
  body: { error: "unavailable", message: "made up by the test proxy" },
});

export interface StoredSession {
  id: string;
  /** The length the listing gives. */
  length: number;
  /** The bytes GET .../events gives. */
  bytes: Buffer;
}

/** Every session of the project as the server lists and serves it. */
export async function storedSessions(url: string, projectId = "p1", token?: string): Promise<StoredSession[]> {
  const out: StoredSession[] = [];
  for (const { id, length } of await listedSessions(url, projectId, token)) {
    const parts: Buffer[] = [];
    await readSession(url, id, (part) => parts.push(part), projectId, token);
    out.push({ id, length, bytes: Buffer.concat(parts) });
  }
  return out;
}

/** The server's listing of the project's sessions (GET .../sessions): each one's id and length. */
export async function listedSessions(url: string, projectId = "p1", token?: string): Promise<{ id: string; length: number }[]> {
  const base = sessionsUrl(url, projectId);
  const listing = await fetch(base, { headers: authorization(token) });
  if (listing.status !== 200) throw new Error(`GET ${base} answered ${listing.status}`);
  return ((await listing.json()) as { sessions: { id: string; length: number }[] }).sessions.map(({ id, length }) => ({ id, length }));
}

/**
 * Hands the bytes GET .../events serves to `onPart` as they come, answered 200. node:http rather
 * than fetch: fetch took half again as much CPU for a transcript of 160 MiB (the large test of
 * cli.test.ts reads one back, streamed: holding it cost more than reading it).
 */
export function readSession(
  url: string,
  sessionId: string,
  onPart: (part: Buffer) => void,
  projectId = "p1",
  token?: string,
): Promise<void> {
  const events = `${sessionsUrl(url, projectId)}/${encodeURIComponent(sessionId)}/events`;
  return new Promise((resolve, reject) => {
    httpGet(events, { headers: authorization(token) }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${events} answered ${res.statusCode}`));
        return;
      }
      res.on("data", onPart);
      res.on("error", reject);
      res.on("end", resolve);
    }).on("error", reject);
  });
}

const sessionsUrl = (url: string, projectId: string) => `${url}/api/projects/${encodeURIComponent(projectId)}/sessions`;
const authorization = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

export interface Served {
  ref: RefServer;
  proxy: Proxy;
}

export interface ServeOptions {
  token?: string;
  rule?: (req: SeenRequest) => Action | undefined;
  keepBodies?: ProxyOptions["keepBodies"];
}

/**
 * Registers an afterEach that stops what `serve()` started; `serve()` starts, for the calling
 * test, a reference server (its own data dir, port 0) and a fault proxy in front of it (port 0).
 */
export function useServed(): (options?: ServeOptions) => Promise<Served> {
  const started: Served[] = [];
  afterEach(async () => {
    for (const { ref, proxy } of started.splice(0)) {
      await proxy.close();
      await ref.stop();
    }
  });
  return async (options = {}) => {
    const ref = await startMemoryRef(options.token);
    try {
      const proxy = await startProxy(ref.url, options.rule, { keepBodies: options.keepBodies });
      started.push({ ref, proxy });
      return { ref, proxy };
    } catch (error) {
      await ref.stop();
      throw error;
    }
  };
}
