import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/server/commit-check.js";
import { plainCopy, sameJson } from "./plain-data.js";

/** Plain data as the simulation holds it: JSON values, with members set to undefined, Maps and Sets. */
const plain = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("op", "path", "sha256", "size", "expect"), fc.oneof(tie("value"), fc.constant(undefined)), {
      maxKeys: 4,
      noNullPrototype: true,
    }),
  ),
})).value;

describe("the simulation's plain data", () => {
  it("sameJson agrees with comparing canonical JSON", () => {
    fc.assert(fc.property(plain, plain, (a, b) => sameJson(a, b) === (canonicalJson(a) === canonicalJson(b))));
    fc.assert(fc.property(plain, (a) => sameJson(a, plainCopy(a)) && canonicalJson(plainCopy(a)) === canonicalJson(a)));
    expect(sameJson({ op: "put", expect: undefined }, { op: "put" })).toBe(true);
    expect(sameJson({ op: "put", size: 1 }, { size: 1, op: "put" })).toBe(true);
    expect(sameJson([{ op: "put" }], [{ op: "delete" }])).toBe(false);
    expect(sameJson([], {})).toBe(false);
  });

  it("plainCopy copies as structuredClone does, sharing nothing", () => {
    const base = {
      version: 3,
      files: new Map([["a", { sha256: "x", size: 1 }]]),
      held: new Set(["b"]),
      sent: undefined,
      list: [{ op: "delete", path: "c" }],
    };
    const copy = plainCopy(base);
    expect(copy).toStrictEqual(structuredClone(base));
    expect(copy.files.get("a")).not.toBe(base.files.get("a"));
    expect(copy.held).not.toBe(base.held);
    expect(copy.list[0]).not.toBe(base.list[0]);
    expect(() => plainCopy({ bytes: new Uint8Array(1) })).toThrow(/not plain data/);
    expect(() => plainCopy({ at: new Date(0) })).toThrow(/not plain data/);
  });
});
