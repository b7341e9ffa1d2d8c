import { describe, expect, it } from "vitest";
import { errorCode, errorText } from "../../src/errors/text.js";

describe("errorText", () => {
  it("says an error's message, whatever threw it", () => {
    expect(errorText(new TypeError("bad"))).toBe("bad");
    expect(errorText(new DOMException("stopped", "AbortError"))).toBe("stopped");
    expect(errorText({ message: "from another realm" })).toBe("from another realm");
  });

  it("says a thrown value that is no error as text (a cast to Error said undefined)", () => {
    expect(errorText("plain words")).toBe("plain words");
    expect(errorText(42)).toBe("42");
    expect(errorText(undefined)).toBe("undefined");
    expect(errorText(null)).toBe("null");
    expect(errorText({ message: 7 })).toBe("[object Object]");
    expect(errorText(Object.create(null))).toBe("[object Object]");
  });
});

describe("errorCode", () => {
  it("is a caught value's string code, or undefined", () => {
    expect(errorCode(Object.assign(new Error("gone"), { code: "ENOENT" }))).toBe("ENOENT");
    expect(errorCode({ code: 3 })).toBeUndefined();
    expect(errorCode("ENOENT")).toBeUndefined();
    expect(errorCode(null)).toBeUndefined();
  });
});
