// The Host and Origin decisions of src/server/host-check.ts, as plain values.

import { describe, expect, it } from "vitest";
import { isServed, refusalOf, servedNames, type Arrival } from "../../src/server/host-check.js";

const LOOPBACK: Arrival = { localAddress: "127.0.0.1", localPort: 4400 };
const LAN: Arrival = { localAddress: "192.168.1.5", localPort: 4400 };
const LAN_ON_V6_WILDCARD: Arrival = { localAddress: "::ffff:192.168.1.5", localPort: 4400 };
const V6: Arrival = { localAddress: "::1", localPort: 4400 };
const NONE = servedNames(undefined);

describe("isServed: a Host header the server answers to", () => {
  it.each<[string | undefined, Arrival, boolean]>([
    ["127.0.0.1:4400", LOOPBACK, true],
    ["localhost:4400", LOOPBACK, true],
    ["LOCALHOST:4400", LOOPBACK, true],
    ["[::1]:4400", LOOPBACK, true],
    ["[0:0:0:0:0:0:0:1]:4400", V6, true],
    ["127.0.0.1", LOOPBACK, false], // port 80
    ["localhost:4401", LOOPBACK, false],
    ["localhost.:4400", LOOPBACK, false],
    ["app.localhost:4400", LOOPBACK, false],
    ["rebind.attacker.example:4400", LOOPBACK, false],
    ["192.168.1.5:4400", LAN, true], // the address the connection came in on (--host 0.0.0.0)
    ["192.168.1.5:4400", LAN_ON_V6_WILDCARD, true],
    ["192.168.1.6:4400", LAN, false],
    ["192.168.1.5:4400", LOOPBACK, false],
    ["evil.example@127.0.0.1:4400", LOOPBACK, false],
    ["127.0.0.1:4400/x", LOOPBACK, false],
    ["", LOOPBACK, false],
    [undefined, LOOPBACK, false],
  ])("%s on %o: %s", (host, arrival, served) => {
    expect(isServed(host, arrival, NONE)).toBe(served);
  });

  it.each<[string, Arrival, boolean]>([
    ["localhost:4401", LOOPBACK, true], // a proxy in front on another port (TLS): still this machine's own name
    ["127.0.0.1", LOOPBACK, true],
    ["192.168.1.5:8443", LAN, true],
    ["rebind.attacker.example:4400", LOOPBACK, false],
    ["192.168.1.6:4400", LAN, false],
  ])("as a Host, its own names on any port: %s on %o: %s", (host, arrival, served) => {
    expect(isServed(host, arrival, NONE, "any")).toBe(served);
    expect(refusalOf({ method: "GET", host, origin: undefined, fetchSite: undefined }, arrival, NONE) === undefined).toBe(served);
  });

  it("an Origin of its own name at another port is another site: a write from it is refused", () => {
    const refusal = refusalOf(
      { method: "POST", host: "localhost:4400", origin: "http://localhost:3000", fetchSite: undefined },
      LOOPBACK,
      NONE,
    );
    expect(refusal?.status).toBe(403);
  });

  it("--public-url serves its host as a browser writes it (default port or not), on any connection", () => {
    const https = servedNames("https://uspark.example.com");
    expect(isServed("uspark.example.com", LOOPBACK, https)).toBe(true);
    expect(isServed("uspark.example.com:443", LOOPBACK, https)).toBe(true);
    expect(isServed("USPARK.example.com", LOOPBACK, https)).toBe(true);
    expect(isServed("uspark.example.com:4400", LOOPBACK, https)).toBe(false);
    expect(isServed("other.example.com", LOOPBACK, https)).toBe(false);
    const withPort = servedNames("http://devbox.lan:4400/");
    expect(isServed("devbox.lan:4400", LAN, withPort)).toBe(true);
    expect(isServed("devbox.lan", LAN, withPort)).toBe(false);
  });

  it("--allowed-host: a name on any port, or name:port on that port only", () => {
    const names = servedNames(undefined, ["uspark", "Proxy.internal:8080"]);
    expect(isServed("uspark:4400", LOOPBACK, names)).toBe(true);
    expect(isServed("uspark", LOOPBACK, names)).toBe(true);
    expect(isServed("proxy.internal:8080", LOOPBACK, names)).toBe(true);
    expect(isServed("proxy.internal:8081", LOOPBACK, names)).toBe(false);
  });

  it("a bad --public-url or --allowed-host is refused with its name", () => {
    for (const bad of ["uspark.example.com", "ftp://x", "https://x/uspark", "https://u:p@x", "https://x/?a=1"]) {
      expect(() => servedNames(bad), bad).toThrow(/--public-url/);
    }
    for (const bad of ["http://x", "x/y", "x:port", ""]) expect(() => servedNames(undefined, [bad]), bad).toThrow(/--allowed-host/);
  });
});

describe("refusalOf: 421 before 403, and 403 only for a browser's cross-site change", () => {
  const host = "127.0.0.1:4400";
  it.each<[string, string | undefined, string | undefined, string | undefined, number | undefined]>([
    // method, host, Origin, Sec-Fetch-Site, status
    ["GET", host, undefined, undefined, undefined],
    ["POST", host, undefined, undefined, undefined], // the CLI: Node's fetch sends neither
    ["POST", host, "http://127.0.0.1:4400", "same-origin", undefined],
    ["POST", host, "http://localhost:4400", undefined, undefined], // another name of this server
    ["POST", host, undefined, "none", undefined], // typed by the person
    ["POST", host, "http://attacker.example", undefined, 403],
    ["PUT", host, "http://localhost:3000", undefined, 403],
    ["POST", host, "null", undefined, 403],
    ["POST", host, "file://", undefined, 403],
    ["POST", host, undefined, "cross-site", 403],
    ["POST", host, undefined, "same-site", 403],
    ["POST", host, "http://127.0.0.1:4400", "cross-site", 403],
    ["POST", host, "null", "same-origin", undefined], // our own form: the pages' Referrer-Policy is no-referrer
    ["POST", host, "null", "cross-site", 403], // a sandboxed frame
    ["GET", host, "http://attacker.example", "cross-site", undefined], // a read: no answer reaches the other site (no CORS)
    ["HEAD", host, undefined, "cross-site", undefined],
    ["GET", "attacker.example:4400", undefined, undefined, 421],
    ["POST", "attacker.example:4400", "http://attacker.example:4400", "same-origin", 421],
  ])("%s Host %s Origin %s Sec-Fetch-Site %s: %s", (method, hostHeader, origin, fetchSite, status) => {
    expect(refusalOf({ method, host: hostHeader, origin, fetchSite }, LOOPBACK, NONE)?.status).toBe(status);
  });

  it("behind a proxy: the public URL's Origin is the server's own", () => {
    const names = servedNames("https://uspark.example.com");
    const asked = { method: "POST", host: "uspark.example.com", origin: "https://uspark.example.com", fetchSite: "same-origin" };
    expect(refusalOf(asked, LOOPBACK, names)).toBeUndefined();
    expect(refusalOf({ ...asked, origin: "https://evil.example.com", fetchSite: "cross-site" }, LOOPBACK, names)?.status).toBe(403);
  });
});
