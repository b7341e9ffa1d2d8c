/**
 * The base of uspark's own errors: each has a stable `code` to match on (never its message, which
 * is for people and may change), kept as each class had its name and `instanceof` before. Node's
 * errors keep theirs (`ENOENT`): `errorCode` (src/errors/text.ts) reads either.
 */
export abstract class UsparkError<C = string> extends Error {
  /** What went wrong, stable: an API error's code, a Node-style code, or the class's own. */
  abstract readonly code: C;
}
