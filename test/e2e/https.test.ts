import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";

// An API behind TLS, as a real deployment has it: the reference server behind an https proxy on
// 127.0.0.1 whose certificate (localhost and 127.0.0.1, valid until 2125) comes from fixtures/.
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
const CERT = fixture("localhost-cert.pem");

const t = perTest("uspark-https-", { server: true });
let proxy: https.Server;
let apiUrl = "";

beforeEach(async () => {
  proxy = https.createServer({ cert: readFileSync(CERT), key: readFileSync(fixture("localhost-key.pem")) }, (req, res) => {
    const upstream = http.request(new URL(req.url ?? "/", t.server!.url), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  apiUrl = `https://localhost:${(proxy.address() as AddressInfo).port}`;
});
afterEach(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
});

describe("an API over https", () => {
  it("push and pull speak TLS to it, checking its certificate against the CAs Node trusts", async () => {
    writeFileSync(path.join(t.root, "a.txt"), "over TLS\n");
    const env = { NODE_EXTRA_CA_CERTS: CERT };
    const push = await runCli(["push", "--project-id", "p", "--api-url", apiUrl, "--root", t.root], { env });
    expect(push.code, push.stderr).toBe(0);
    const other = path.join(t.root, "other");
    mkdirSync(other);
    const pull = await runCli(["pull", "--project-id", "p", "--api-url", apiUrl, "--root", other], { env });
    expect(pull.code, pull.stderr).toBe(0);
    expect(readFileSync(path.join(other, "a.txt"), "utf8")).toBe("over TLS\n");
  });

  it("a certificate it cannot trust ends the push at once (no retries until the flush timeout), saying why and what to do: nothing is sent", async () => {
    writeFileSync(path.join(t.root, "a.txt"), "secret\n");
    const push = await runCli(["push", "--project-id", "p", "--api-url", apiUrl, "--root", t.root, "--flush-timeout", "60000"], {
      env: { NODE_EXTRA_CA_CERTS: undefined },
    });
    expect(push.code).toBe(1);
    expect(push.stderr).toContain("the server's certificate is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(push.stderr).toContain("NODE_EXTRA_CA_CERTS");
    expect(push.stderr).not.toContain("waiting for");
    expect(t.server!.requests.filter((r) => r.method !== "GET" && r.method !== "HEAD")).toEqual([]);
  });
});
