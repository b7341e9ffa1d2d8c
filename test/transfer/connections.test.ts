import { spawn } from "node:child_process";
import { getEventListeners } from "node:events";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Connections, readBody, type IncomingAnswer } from "../../src/transfer/connections.js";

/** A loopback server whose every request is handled by `handler`; it counts the connections it accepted. */
async function serve(handler: http.RequestListener): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  let accepted = 0;
  server.on("connection", (socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const OPTIONS = { connections: 2, keepAliveMs: 5000, connectTimeoutMs: 2000 };
const get = (path = "/") => ({ method: "GET", path, headers: {}, headersTimeoutMs: 2000 });
const text = (answer: IncomingAnswer) =>
  readBody(answer.body, { limit: 1 << 20, truncate: false, idleMs: 2000, tooLarge: () => new Error("too large") }).then(String);

describe("Connections", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function setUp(handler: http.RequestListener, options = OPTIONS) {
    const server = await serve(handler);
    const connections = new Connections(server.url, options);
    cleanups.push(server.close, () => connections.close(0));
    return { server, connections };
  }

  it("keeps one connection alive for requests one after another", async () => {
    const { server, connections } = await setUp((req, res) => res.end(req.url));
    for (const path of ["/a", "/b", "/c"]) expect(await text(await connections.request(get(path)))).toBe(path);
    expect(server.connections()).toBe(1);
  });

  it("opens at most `connections` at once; the others wait their turn", async () => {
    const waiting: http.ServerResponse[] = [];
    const { server, connections } = await setUp((_req, res) => {
      waiting.push(res);
      if (waiting.length === 2) for (const held of waiting.splice(0)) held.end("ok");
    });
    const answers = await Promise.all([1, 2, 3, 4].map(() => connections.request(get()).then(text)));
    expect(answers).toEqual(["ok", "ok", "ok", "ok"]);
    expect(server.connections()).toBe(2);
  });

  it("sends a body given in pieces whole, with its content-length", async () => {
    const { connections } = await setUp((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => res.end(`${req.headers["content-length"]} ${req.headers["transfer-encoding"] ?? "-"} ${Buffer.concat(chunks)}`));
    });
    const body = [Buffer.from("one "), new Uint8Array([116, 119, 111]), Buffer.alloc(0)];
    expect(await text(await connections.request({ ...get(), method: "POST", body }))).toBe("7 - one two");
  });

  it("fails with HEADERS_TIMEOUT when the server takes the request and never answers", async () => {
    const { connections } = await setUp(() => {});
    const started = Date.now();
    await expect(connections.request({ ...get(), headersTimeoutMs: 150 })).rejects.toMatchObject({ code: "HEADERS_TIMEOUT" });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("fails with BODY_TIMEOUT when the answer's body stops coming", async () => {
    const { connections } = await setUp((_req, res) => {
      res.writeHead(200, { "content-length": "10" });
      res.write("12345");
    });
    const answer = await connections.request(get());
    await expect(
      readBody(answer.body, { limit: 100, truncate: false, idleMs: 150, tooLarge: () => new Error("too large") }),
    ).rejects.toMatchObject({ code: "BODY_TIMEOUT" });
  });

  it("refuses a body past its limit, or cuts it there (truncate)", async () => {
    const { connections } = await setUp((_req, res) => res.end("x".repeat(100)));
    const tooLarge = () => new Error("too large");
    await expect(readBody((await connections.request(get())).body, { limit: 10, truncate: false, idleMs: 2000, tooLarge })).rejects.toThrow(
      "too large",
    );
    const cut = await readBody((await connections.request(get())).body, { limit: 10, truncate: true, idleMs: 2000, tooLarge });
    expect(cut.length).toBeLessThanOrEqual(10);
  });

  it("stops a request when its signal aborts, with the signal's reason", async () => {
    const { connections } = await setUp(() => {});
    const controller = new AbortController();
    const pending = connections.request({ ...get(), signal: controller.signal, headersTimeoutMs: 10_000 });
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("stops the answer's body too, and leaves no listener on a lifelong signal once a request is over", async () => {
    let drip: (() => void) | undefined;
    const { connections } = await setUp((req, res) => {
      if (req.url === "/slow") return void ((drip = () => res.write("x")), res.writeHead(200), res.write("x"));
      res.end("ok");
    });
    const session = new AbortController();
    for (let i = 0; i < 3; i++) expect(await text(await connections.request({ ...get(), signal: session.signal }))).toBe("ok");
    expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
    const cut = new AbortController();
    const answer = await connections.request({ ...get("/slow"), signal: cut.signal });
    const body = text(answer);
    drip!();
    cut.abort(new Error("stop"));
    await expect(body).rejects.toThrow(); // the connection is cut under it
    await expect(connections.request({ ...get(), signal: cut.signal })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("close() lets a request under way finish within the grace, then closes", async () => {
    let answer: (() => void) | undefined;
    const { connections } = await setUp((_req, res) => (answer = () => res.end("late but whole")));
    const pending = connections.request(get()).then(text);
    await until(() => answer !== undefined);
    const closed = connections.close(5000);
    answer!();
    expect(await pending).toBe("late but whole");
    await closed;
  });

  it("close() past its grace cuts the requests still under way", async () => {
    const { connections } = await setUp(() => {});
    const pending = connections.request({ ...get(), headersTimeoutMs: 10_000 }).catch((error: Error) => error);
    await new Promise((resolve) => setImmediate(resolve));
    const started = Date.now();
    await connections.close(100);
    expect(await pending).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("an idle kept-alive connection does not hold the process open", async () => {
    // A CLI ends when its work is done, whether or not it closed its connections.
    const { server } = await setUp((_req, res) => res.end("ok"));
    const script = `
      import { Connections, readBody } from ${JSON.stringify(pathToFileURL(path.resolve("dist/transfer/connections.js")).href)};
      const connections = new Connections(${JSON.stringify(server.url)}, { connections: 1, keepAliveMs: 60000, connectTimeoutMs: 2000 });
      const answer = await connections.request({ method: "GET", path: "/", headers: {}, headersTimeoutMs: 2000 });
      process.stdout.write(await readBody(answer.body, { limit: 10, truncate: false, idleMs: 2000, tooLarge: () => new Error() }));`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk));
    const code = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the process was held open by its idle connection")), 10_000);
      child.on("exit", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect({ code, out }).toEqual({ code: 0, out: "ok" });
    expect(server.connections()).toBe(1);
  });
});

async function until(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
