// Preloaded into a CLI child (NODE_OPTIONS=--import): every name under .test (RFC 2606: never a
// real one) resolves to 127.0.0.1, so a test can address a local server by another name and no
// request leaves the machine.
import dns from "node:dns";

const lookup = dns.lookup;
dns.lookup = function (hostname, ...rest) {
  return lookup.call(this, /\.test\.?$/i.test(hostname) ? "127.0.0.1" : hostname, ...rest);
};
