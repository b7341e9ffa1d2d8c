import { isIP } from "node:net";

/** Loopback addresses and `localhost`: the only hosts reached without TLS or a token by default. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || /^::ffff:127\./.test(bare);
  return false;
}
