// A round-robin TCP proxy (a load balancer in miniature) for replica tests: each new connection
// goes to the next backend; a backend that refuses the connection is skipped.

import { connect, createServer, type Socket } from "node:net";

export interface Proxy {
  url: string;
  /** Connections handed to each backend so far, by index. */
  connections: number[];
  close(): Promise<void>;
}

export async function roundRobinProxy(backends: { host: string; port: number }[]): Promise<Proxy> {
  let next = 0;
  const connections = backends.map(() => 0);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };

  const server = createServer((client) => {
    track(client);
    client.pause();
    const tryBackend = (attempt: number) => {
      if (attempt >= backends.length) return client.destroy();
      const index = next++ % backends.length;
      const backend = backends[index]!;
      const upstream = connect(backend.port, backend.host);
      track(upstream);
      let connected = false;
      upstream.once("connect", () => {
        connected = true;
        connections[index]!++;
        upstream.on("error", () => client.destroy());
        client.on("error", () => upstream.destroy());
        // A backend that dies cuts its clients off, as a real load balancer's connection would be.
        upstream.on("close", () => client.destroy());
        client.on("close", () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.once("error", () => {
        if (!connected) tryBackend(attempt + 1);
      });
    };
    tryBackend(0);
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
