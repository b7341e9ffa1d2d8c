import { describe, expect, it } from "vitest";
import { conflictCopyPath, hostLabel, isConflictCopyOf } from "../../src/reconcile/conflict-copy.js";
import { validateProjectPath } from "../../src/api/validate.js";

const AT = new Date("2026-11-25T10:15:07.123Z");
const SHA = "0123456789abcdef".repeat(4);

describe("conflictCopyPath: <dir>/<stem>.conflict-<UTC time>-<host>-<sha6><.ext>", () => {
  it.each([
    ["src/app.test.ts", "src/app.test.conflict-20261125-101507-ci-7-012345.ts"],
    ["README", "README.conflict-20261125-101507-ci-7-012345"],
    [".env", ".env.conflict-20261125-101507-ci-7-012345"], //          a dotfile has no extension
    ["conf/.eslintrc.json", "conf/.eslintrc.conflict-20261125-101507-ci-7-012345.json"],
    ["odd.", "odd..conflict-20261125-101507-ci-7-012345"], //          a trailing dot is no extension
  ])("%s → %s", (path, copy) => {
    expect(conflictCopyPath(path, AT, "ci-7", SHA)).toBe(copy);
    expect(isConflictCopyOf(copy, path)).toBe(true);
  });

  it("keeps the host a safe path segment", () => {
    expect(hostLabel("my laptop/../x")).toBe("my_laptop_.._x");
    expect(hostLabel("..")).toBe("host");
    expect(validateProjectPath(conflictCopyPath("a.txt", AT, "../../etc", SHA))).toBeUndefined();
  });

  it("stays a valid project path for a name at the length limit", () => {
    const long = `${"d".repeat(500)}/${"n".repeat(520)}.txt`;
    const copy = conflictCopyPath(long, AT, "ci-7", SHA);
    expect(validateProjectPath(copy)).toBeUndefined();
    expect(copy.endsWith("-012345.txt")).toBe(true);
  });

  it("tells a copy of another file, or of a file elsewhere, apart", () => {
    const copy = conflictCopyPath("src/a.ts", AT, "ci-7", SHA);
    expect(isConflictCopyOf(copy, "src/b.ts")).toBe(false);
    expect(isConflictCopyOf(copy, "a.ts")).toBe(false);
    expect(isConflictCopyOf("src/a.conflict-notatime.ts", "src/a.ts")).toBe(false);
  });
});
