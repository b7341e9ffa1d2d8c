import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCli } from "../kit/cli.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "uspark-pass-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const watch = () => ["watch-claude", "--dry-run", "--no-fs-watch", "--root", root];

async function expectIdentical(input: Buffer, chunks?: Buffer[]) {
  const result = await runCli(watch(), { input: chunks ?? input, timeoutMs: 60_000 });
  expect(result.code).toBe(0);
  expect(result.stdout.length).toBe(input.length);
  expect(result.stdout.equals(input)).toBe(true);
  return result;
}

describe("passthrough", () => {
  it("should pass empty input through as nothing", async () => {
    await expectIdentical(Buffer.alloc(0));
  });

  it("should keep CRLF line endings", async () => {
    await expectIdentical(Buffer.from('{"type":"system"}\r\nplain\r\n\r\n'));
  });

  it("should keep invalid UTF-8 and NUL bytes", async () => {
    await expectIdentical(Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a, 0x00]), randomBytes(4096)]));
  });

  it("should keep a last line without a newline", async () => {
    await expectIdentical(Buffer.from('{"type":"user"}\nno newline at the end'));
  });

  it("should keep a multi-byte character split across writes", async () => {
    const input = Buffer.from('{"type":"assistant","x":"ünïcode ✓ 日本"}\n'.repeat(3));
    const chunks = Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
    await expectIdentical(input, chunks);
  });

  it("should pass a 64 MiB line through whole", async () => {
    const line = Buffer.alloc(64 * 1024 * 1024, 0x61);
    line[line.length - 1] = 0x0a;
    await expectIdentical(line);
  });

  it("should pass an over-long line through and warn that it was not parsed", async () => {
    const input = Buffer.from("x".repeat(5000) + "\nshort\n");
    const result = await runCli([...watch(), "--max-line-length", "1000"], { input });
    expect(result.stdout.equals(input)).toBe(true);
    expect(result.stderr.match(/not parsed/g)).toHaveLength(1);
  });

  it("should deliver everything to a slow reader before exiting", async () => {
    const input = randomBytes(8 * 1024 * 1024);
    const { child, result } = await startCli(watch(), { input });
    // Read in small bites with pauses driven by the data itself, so the pipe stays full.
    child.stdout.pause();
    const drip = setInterval(() => {
      child.stdout.resume();
      setImmediate(() => child.stdout.pause());
    }, 1);
    const done = await result.finally(() => clearInterval(drip));
    expect(done.code).toBe(0);
    expect(done.stdout.equals(input)).toBe(true);
  });

  it("should stop writing quietly when the reader goes away and keep detecting", async () => {
    const root2 = root;
    const lines = [
      JSON.stringify({ type: "system", subtype: "init", cwd: root2, session_id: "s" }),
      ...Array.from({ length: 2000 }, (_, i) =>
        JSON.stringify({
          type: "assistant",
          session_id: "s",
          message: { content: [{ type: "text", text: `filler ${i} ${"y".repeat(200)}` }] },
        }),
      ),
      JSON.stringify({
        type: "assistant",
        session_id: "s",
        message: { content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: `${root2}/late.txt`, content: "x" } }] },
      }),
      JSON.stringify({ type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] } }),
    ];
    const { child, result } = await startCli(watch(), { input: lines.join("\n") + "\n" });
    child.stdout.once("data", () => child.stdout.destroy());
    const done = await result;
    expect(done.code).toBe(0);
    expect(done.stderr).toContain("would push late.txt (Write)");
    expect(done.stderr).not.toMatch(/EPIPE|error/i);
  });
});
