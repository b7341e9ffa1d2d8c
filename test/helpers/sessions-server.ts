import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A tiny server with only the v1.1 transcript routes (design.md §3), in memory, on 127.0.0.1
 * port 0, with scripted faults: `fault(put)` decides what becomes of each PUT.
 *
 *   apply-then-reset   append the bytes, then cut the connection instead of answering
 *   reset              cut the connection, append nothing
 *   stall              never answer (until `release()`), append nothing
 *   { status }         answer that status (e.g. 503 with Retry-After), append nothing
 *
 * `v1: true` answers 404 on every route, as a v1 server does on these.
 */

export type Fault = "apply-then-reset" | "reset" | "stall" | { status: number; headers?: Record<string, string> };

export interface PutRecord {
  sessionId: string;
  offset: number;
  bytes: number;
  /** The status answered, or the fault. */
  outcome: number | string;
}

export interface SessionsServer {
  url: string;
  /** projectId/sessionId → bytes. */
  sessions: Map<string, Buffer>;
  puts: PutRecord[];
  fault: (put: { sessionId: string; offset: number; n: number }) => Fault | undefined;
  /** Answers the stalled requests (applying nothing) and stops stalling. */
  release(): void;
  close(): Promise<void>;
}

const MAX_BODY = 8 * 1024 * 1024;
const ROUTE = /^\/api\/projects\/([^/]+)\/sessions(?:\/([^/]+)\/events)?$/;

export async function startSessionsServer(options: { v1?: boolean } = {}): Promise<SessionsServer> {
  const sockets = new Set<Socket>();
  let stalled: ServerResponse[] = [];
  const state: SessionsServer = {
    url: "",
    sessions: new Map(),
    puts: [],
    fault: () => undefined,
    release() {
      state.fault = () => undefined;
      for (const res of stalled) json(res, 503, { error: "unavailable", message: "released" });
      stalled = [];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const match = ROUTE.exec(url.pathname);
    if (options.v1 || !match) return drainThen(req, () => json(res, 404, { error: "not_found", message: "no such route" }));
    const [, projectId, sessionId] = match.map((part) => (part === undefined ? undefined : decodeURIComponent(part)));
    if (!sessionId) {
      if (req.method !== "GET") return drainThen(req, () => json(res, 405, { error: "method_not_allowed" }));
      const prefix = `${projectId}/`;
      const sessions = [...state.sessions].filter(([key]) => key.startsWith(prefix)).map(([key, bytes]) => ({ id: key.slice(prefix.length), length: bytes.length }));
      return json(res, 200, { sessions });
    }
    const key = `${projectId}/${sessionId}`;
    if (req.method === "GET") {
      const bytes = state.sessions.get(key);
      if (!bytes) return json(res, 404, { error: "not_found" });
      res.writeHead(200, { "content-type": "application/x-ndjson", "content-length": String(bytes.length) });
      return res.end(bytes);
    }
    if (req.method !== "PUT") return drainThen(req, () => json(res, 405, { error: "method_not_allowed" }));
    const offset = Number(url.searchParams.get("offset"));
    readBody(req, (body) => {
      if (body === undefined) return json(res, 413, { error: "too_large" });
      const record: PutRecord = { sessionId, offset, bytes: body.length, outcome: 0 };
      state.puts.push(record);
      const fault = state.fault({ sessionId, offset, n: state.puts.length - 1 });
      if (fault === "reset" || fault === "stall") {
        record.outcome = fault;
        if (fault === "reset") req.socket.destroy();
        else stalled.push(res);
        return;
      }
      if (typeof fault === "object") {
        record.outcome = fault.status;
        return json(res, fault.status, { error: "unavailable" }, fault.headers);
      }
      const { status, length } = append(state.sessions, key, offset, body);
      record.outcome = fault ?? status;
      if (fault === "apply-then-reset") return req.socket.destroy();
      json(res, status, status === 200 ? { length } : { error: "offset_mismatch", message: `the transcript has ${length} bytes`, length });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** The contract: append at the current length; the same bytes at the same offset again are a 200 that appends nothing. */
function append(sessions: Map<string, Buffer>, key: string, offset: number, body: Buffer): { status: number; length: number } {
  const current = sessions.get(key) ?? Buffer.alloc(0);
  if (offset === current.length) {
    sessions.set(key, Buffer.concat([current, body]));
    return { status: 200, length: current.length + body.length };
  }
  const again = Number.isSafeInteger(offset) && offset >= 0 && offset + body.length <= current.length && current.subarray(offset, offset + body.length).equals(body);
  return { status: again ? 200 : 409, length: current.length };
}

function readBody(req: IncomingMessage, done: (body: Buffer | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  });
  req.on("end", () => done(size > MAX_BODY ? undefined : Buffer.concat(chunks)));
}

function drainThen(req: IncomingMessage, answer: () => void): void {
  req.resume();
  req.on("end", answer);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}
