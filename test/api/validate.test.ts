import { describe, expect, it } from "vitest";
import { parseCommitRequest, validateProjectId, validateProjectPath, validateSessionId } from "../../src/api/validate.js";

const HEX = "a".repeat(64);

describe("validateProjectPath", () => {
  it.each(["a.txt", "src/a.ts", "deep/er/still/file", ".hidden/.env", "..foo/bar..", "a b/ü/日本.md", "😀.txt"])("accepts %j", (path) => {
    expect(validateProjectPath(path)).toBeUndefined();
  });

  it("refuses an empty path", () => {
    expect(validateProjectPath("")).toMatch(/empty/);
  });

  it("refuses an absolute path", () => {
    expect(validateProjectPath("/etc/passwd")).toMatch(/relative/);
  });

  it("refuses an empty segment in the middle", () => {
    expect(validateProjectPath("a//b")).toMatch(/empty segment/);
  });

  it("refuses a trailing slash (an empty last segment)", () => {
    expect(validateProjectPath("dir/")).toMatch(/empty segment/);
  });

  it("refuses a '.' segment", () => {
    expect(validateProjectPath("a/./b")).toMatch(/'\.' segment/);
    expect(validateProjectPath(".")).toMatch(/'\.' segment/);
  });

  it("refuses a '..' segment", () => {
    expect(validateProjectPath("../secret")).toMatch(/'\.\.' segment/);
    expect(validateProjectPath("a/../../b")).toMatch(/'\.\.' segment/);
    expect(validateProjectPath("a/..")).toMatch(/'\.\.' segment/);
  });

  it("refuses a backslash", () => {
    expect(validateProjectPath("a\\b.txt")).toMatch(/backslash/);
    expect(validateProjectPath("..\\..\\x")).toMatch(/backslash/);
  });

  it("refuses a NUL byte", () => {
    expect(validateProjectPath("a\0.txt")).toMatch(/NUL/);
  });

  it("refuses text that is not valid UTF-8 (a lone surrogate)", () => {
    expect(validateProjectPath("a\ud800.txt")).toMatch(/UTF-8/);
    expect(validateProjectPath("\udc00")).toMatch(/UTF-8/);
  });

  it("accepts exactly 1024 bytes and refuses 1025, counting UTF-8 bytes rather than characters", () => {
    expect(validateProjectPath("a".repeat(1024))).toBeUndefined();
    expect(validateProjectPath("a".repeat(1025))).toMatch(/1024 bytes/);
    // 513 × "é" (2 bytes each) is 513 characters but 1026 bytes.
    expect(validateProjectPath("é".repeat(512))).toBeUndefined();
    expect(validateProjectPath("é".repeat(513))).toMatch(/1024 bytes/);
    expect(validateProjectPath("😀".repeat(256))).toBeUndefined();
    expect(validateProjectPath("😀".repeat(256) + "a")).toMatch(/1024 bytes/);
  });

  it("refuses a value that is not a string", () => {
    expect(validateProjectPath(42 as unknown as string)).toMatch(/string/);
  });
});

describe("validateProjectId", () => {
  it.each([
    ["a plain name", "demo"],
    ["dots, dashes and underscores", "my-project_1.0"],
    ["spaces and punctuation", "team a: q3 (draft) #2?"],
    ["non-ASCII letters", "ü-日本"],
    ["255 ASCII bytes", "A".repeat(255)],
    ["255 bytes of 3-byte characters", "日".repeat(85)],
    ["255 bytes of 4-byte characters and 3 more", "😀".repeat(63) + "abc"],
    ["a name that starts with a dot", ".hidden"],
  ])("accepts %s", (_name, id) => {
    expect(validateProjectId(id)).toBeUndefined();
  });

  it.each([
    ["an empty id", "", /empty/],
    ["'.'", ".", /'\.'/],
    ["'..'", "..", /'\.\.'/],
    ["a slash", "a/b", /\//],
    ["a backslash", "a\\b", /\\/],
    ["a NUL", "a\0b", /control/],
    ["a tab", "a\tb", /control/],
    ["DEL", "a\x7fb", /control/],
    ["a C1 control (NEL)", "a\u0085b", /control/],
    ["256 ASCII bytes", "x".repeat(256), /255 bytes/],
    ["256 bytes of 2-byte characters", "é".repeat(128), /255 bytes/],
    ["a lone surrogate", "a\ud800", /UTF-8/],
  ])("refuses %s", (_name, id, reason) => {
    expect(validateProjectId(id)).toMatch(reason);
  });
});

describe("validateSessionId", () => {
  it.each(["s-1", "A".repeat(128)])("accepts %j", (id) => {
    expect(validateSessionId(id)).toBeUndefined();
  });

  it.each(["", ".", "..", "a b", "a/b", "x".repeat(129), "ü"])("refuses %j (it names a file)", (id) => {
    expect(validateSessionId(id)).toBeTypeOf("string");
  });
});

describe("parseCommitRequest", () => {
  it("keeps put and delete changes and the known source fields", () => {
    const result = parseCommitRequest({
      changes: [
        { op: "put", path: "a.txt", sha256: HEX, size: 3, extra: true },
        { op: "delete", path: "old.txt" },
      ],
      source: { agent: "claude", sessionId: "s1", other: 1 },
      future: "ignored",
    });
    expect(result).toEqual({
      ok: true,
      value: {
        changes: [
          { op: "put", path: "a.txt", sha256: HEX, size: 3 },
          { op: "delete", path: "old.txt" },
        ],
        source: { agent: "claude", sessionId: "s1" },
      },
    });
  });

  it.each([
    ["a body that is not an object", [1]],
    ["changes that are not an array", { changes: {} }],
    ["a missing changes field", {}],
    ["a change that is not an object", { changes: ["a.txt"] }],
    ["an unknown op", { changes: [{ op: "move", path: "a" }] }],
    ["a path that is not a string", { changes: [{ op: "delete", path: 1 }] }],
    ["a put without sha256", { changes: [{ op: "put", path: "a", size: 1 }] }],
    ["an uppercase sha256", { changes: [{ op: "put", path: "a", sha256: "A".repeat(64), size: 1 }] }],
    ["a short sha256", { changes: [{ op: "put", path: "a", sha256: "ab", size: 1 }] }],
    ["a put without size", { changes: [{ op: "put", path: "a", sha256: HEX }] }],
    ["a negative size", { changes: [{ op: "put", path: "a", sha256: HEX, size: -1 }] }],
    ["a fractional size", { changes: [{ op: "put", path: "a", sha256: HEX, size: 1.5 }] }],
    ["a size given as a string", { changes: [{ op: "put", path: "a", sha256: HEX, size: "1" }] }],
    ["a source that is not an object", { changes: [], source: "claude" }],
    ["a source agent that is not a string", { changes: [], source: { agent: 1 } }],
  ])("refuses %s as invalid_request", (_name, body) => {
    expect(parseCommitRequest(body)).toMatchObject({ ok: false, error: "invalid_request" });
  });

  it("keeps an expect that is a hash or null, on puts and deletes, and leaves it out when absent", () => {
    const result = parseCommitRequest({
      changes: [
        { op: "put", path: "a", sha256: HEX, size: 1, expect: null },
        { op: "put", path: "b", sha256: HEX, size: 1, expect: HEX },
        { op: "delete", path: "c", expect: HEX },
        { op: "delete", path: "d", expect: null },
        { op: "delete", path: "e" },
      ],
    });
    expect(result).toEqual({
      ok: true,
      value: {
        changes: [
          { op: "put", path: "a", sha256: HEX, size: 1, expect: null },
          { op: "put", path: "b", sha256: HEX, size: 1, expect: HEX },
          { op: "delete", path: "c", expect: HEX },
          { op: "delete", path: "d", expect: null },
          { op: "delete", path: "e" },
        ],
      },
    });
    expect(Object.hasOwn((result as { value: { changes: object[] } }).value.changes[4]!, "expect")).toBe(false);
  });

  it.each([
    ["an uppercase hash", "A".repeat(64)],
    ["a short hash", "abc"],
    ["a number", 1],
    ["false", false],
    ["an empty string", ""],
    ["an object", { sha256: HEX }],
  ])("refuses an expect that is %s as invalid_request", (_name, value) => {
    expect(parseCommitRequest({ changes: [{ op: "delete", path: "a", expect: value }] })).toMatchObject({
      ok: false,
      error: "invalid_request",
      message: expect.stringContaining("changes[0].expect"),
    });
  });

  it("reports the offending path as invalid_path", () => {
    expect(
      parseCommitRequest({
        changes: [
          { op: "delete", path: "ok" },
          { op: "delete", path: "../x" },
        ],
      }),
    ).toEqual({
      ok: false,
      error: "invalid_path",
      path: "../x",
      message: "changes[1]: path has a '..' segment",
    });
  });
});
