import { describe, expect, it } from "vitest";
import { failureReason, StreamTail } from "../../src/lifecycle/stream-tail.js";

function fed(size: number, chunks: Buffer[]): StreamTail {
  const tail = new StreamTail(size);
  for (const chunk of chunks) tail.push(chunk);
  return tail;
}

describe("StreamTail: the last bytes of a stream, whatever its chunks", () => {
  const stream = Buffer.from(Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join(""));

  it.each([
    { name: "one chunk, shorter than the ring", size: 64, chunks: [3], whole: true },
    { name: "chunks of 1 byte past the ring's size", size: 64, chunks: Array(200).fill(1), whole: false },
    { name: "chunks that wrap the ring's end", size: 64, chunks: Array(40).fill(7), whole: false },
    { name: "a chunk larger than the ring", size: 64, chunks: [500], whole: false },
    { name: "exactly the ring's size", size: 64, chunks: [32, 32], whole: true },
    { name: "the whole stream in uneven chunks", size: 1024, chunks: [1, 1000, 3, 5000], whole: false },
  ])("$name", ({ size, chunks, whole }) => {
    const parts: Buffer[] = [];
    let at = 0;
    for (const length of chunks) parts.push(stream.subarray(at, (at += length)));
    const total = Buffer.concat(parts);
    const kept = fed(size, parts).bytes();
    expect(kept.whole).toBe(whole);
    expect(kept.bytes.toString()).toBe(total.subarray(Math.max(0, total.length - size)).toString());
  });

  it("copies what it keeps: a reused buffer does not change it", () => {
    const buffer = Buffer.from("abcd");
    const tail = fed(8, [buffer]);
    buffer.fill(0x78);
    expect(tail.bytes().bytes.toString()).toBe("abcd");
  });
});

describe("failureReason", () => {
  const line = (event: object) => JSON.stringify(event) + "\n";
  const whole = (text: string) => ({ bytes: Buffer.from(text), whole: true });

  it.each([
    {
      name: "Claude's failed result",
      text: line({ type: "result", is_error: true, result: "Not logged in · Please run /login" }),
      want: "Not logged in · Please run /login",
    },
    {
      name: "Claude's successful result",
      text: line({ type: "result", subtype: "success", is_error: false, result: "done" }),
      want: undefined,
    },
    {
      name: "Codex's turn.failed",
      format: "codex",
      text: line({ type: "turn.failed", error: { message: "stream disconnected" } }),
      want: "stream disconnected",
    },
    { name: "no JSON at all", text: "Error: something\n", want: undefined },
    {
      name: "the last result wins",
      text: line({ type: "result", is_error: true, result: "first" }) + line({ type: "result", is_error: false, result: "ok" }),
      want: undefined,
    },
  ])("$name", ({ text, want, format }: { text: string; want: string | undefined; format?: string }) => {
    expect(failureReason(whole(text), format ?? "claude")).toBe(want);
  });

  it("drops the cut first line of a tail that starts mid-stream", () => {
    const cut = '"is_error":true,"result":"half"}\n' + line({ type: "result", is_error: true, result: "whole" });
    expect(failureReason({ bytes: Buffer.from(cut), whole: false }, "claude")).toBe("whole");
    expect(
      failureReason({ bytes: Buffer.from('{"type":"result","is_error":true,"result":"cut"}\n'), whole: false }, "claude"),
    ).toBeUndefined();
  });
});
