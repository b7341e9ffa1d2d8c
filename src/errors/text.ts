/**
 * What is said of a caught value, whatever was thrown: its message when it has one (an Error, a
 * DOMException, an error of another realm), else the value as text. One helper instead of a cast
 * at every catch (`(error as Error).message` said "undefined" of a thrown string).
 */
export function errorText(error: unknown): string {
  const message = typeof error === "object" && error !== null ? (error as { message?: unknown }).message : undefined;
  if (typeof message === "string") return message;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error); // an object without a prototype has no toString
  }
}

/** A caught value's `code` (`ENOENT`, `EPIPE`, a UsparkError's), or undefined when it has none that is a string. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
}
