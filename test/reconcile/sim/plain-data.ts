/**
 * A deep copy of plain data (objects, arrays, Maps, Sets, primitives): what structuredClone gives
 * for the simulation's values (a saved base, a commit sent or logged), at a fraction of its cost.
 * structuredClone serializes and parses every value: it was the simulation's largest cost of its
 * own (the state file is saved, and commits copied, thousands of times a seed). Anything else
 * (a class instance, bytes, a function) throws: a copy must never share state unnoticed.
 */
export function plainCopy<T>(value: T): T {
  return copyOf(value) as T;
}

function copyOf(value: unknown): unknown {
  if (typeof value !== "object" || value === null) {
    if (typeof value === "function" || typeof value === "symbol") throw new TypeError(`plainCopy: cannot copy a ${typeof value}`);
    return value;
  }
  if (Array.isArray(value)) return value.map(copyOf);
  if (value instanceof Map) {
    const copy = new Map<unknown, unknown>();
    for (const [k, v] of value) copy.set(copyOf(k), copyOf(v));
    return copy;
  }
  if (value instanceof Set) {
    const copy = new Set<unknown>();
    for (const v of value) copy.add(copyOf(v));
    return copy;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype)
    throw new TypeError(`plainCopy: not plain data: ${Object.prototype.toString.call(value)}`);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyOf((value as Record<string, unknown>)[key]);
  return copy;
}

/**
 * Whether two plain values are the same JSON (canonicalJson(a) === canonicalJson(b): key order
 * and members set to undefined do not count), without building either string: the end check
 * compares every acknowledged commit with the history, and that was a tenth of a seed's time.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const keysOf = (value: object) => Object.keys(value).filter((key) => (value as Record<string, unknown>)[key] !== undefined);
  const [keysA, keysB] = [keysOf(a), keysOf(b)];
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
