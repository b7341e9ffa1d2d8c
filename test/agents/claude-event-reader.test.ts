import { describe, expect, it } from "vitest";
import { EventReader } from "../../src/agents/claude-event-reader.js";
import { CLAUDE_TOOLS } from "../../src/agents/claude.js";
import { JsonScanner } from "../../src/agents/json-scanner.js";

/** Scans `event` as the Claude parser does; where the scan stopped (-1: read to the end), and what it read. */
function scan(event: object) {
  const reader = new EventReader(CLAUDE_TOOLS);
  const scanner = new JsonScanner(reader, undefined, reader.keys);
  reader.scanner = scanner;
  const line = Buffer.from(JSON.stringify(event));
  const stoppedAt = scanner.write(line);
  return { reader, line, stoppedAt };
}

const result = { tool_use_id: "toolu_1", type: "tool_result", content: "The file /p/a.ts has been updated.", is_error: false };
/** What Claude Code adds after an Edit's result: the file as it was, and the patch, often far longer than the message. */
const editResult = {
  filePath: "/p/a.ts",
  originalFile: 'const s = "a \\"quoted\\" string";\n'.repeat(2000),
  structuredPatch: Array.from({ length: 500 }, (_, i) => ({ oldStart: i, lines: [`-old ${i}`, `+new ${i}`] })),
};

describe("EventReader", () => {
  it("reads a user event no further than its message: Claude Code's tool_use_result after it is passed over", () => {
    const { reader, line, stoppedAt } = scan({
      type: "user",
      message: { role: "user", content: [result] },
      parent_tool_use_id: null,
      tool_use_result: editResult,
    });
    expect(reader.blocks).toEqual([{ toolUseId: "toolu_1", type: "tool_result", isError: false }]);
    // Stopped at the first member after the message.
    expect(stoppedAt).toBeGreaterThan(line.indexOf('"parent_tool_use_id"'));
    expect(stoppedAt).toBeLessThan(line.indexOf('"tool_use_result"'));
  });

  it("reads a user event whose type comes after its message to the end", () => {
    const { reader, stoppedAt } = scan({ message: { content: [result] }, tool_use_result: editResult, type: "user" });
    expect(stoppedAt).toBe(-1);
    expect(reader.type).toBe("user");
    expect(reader.blocks).toHaveLength(1);
  });

  it("reads every result block of a user event, however long their content", () => {
    const long = { ...result, content: "x".repeat(100_000), is_error: true };
    const { reader } = scan({
      type: "user",
      message: { content: [long, { ...result, tool_use_id: "toolu_2" }] },
      tool_use_result: editResult,
    });
    expect(reader.blocks.map((block) => [block.toolUseId, block.isError])).toStrictEqual([
      ["toolu_1", true],
      ["toolu_2", false],
    ]);
  });

  it("stops an event of a type that never matters at its first other member", () => {
    const { reader, stoppedAt } = scan({ type: "stream_event", event: { type: "content_block_delta" } });
    expect(reader.discard).toBe(true);
    expect(stoppedAt).toBeGreaterThan(0);
  });
});
