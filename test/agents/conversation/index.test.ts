import { describe, expect, it } from "vitest";
import { conversationFormats, createConversationReader, type Step } from "../../../src/agents/conversation/index.js";
import { DEFAULT_DETECT_MAX_EVENTS } from "../../../src/agents/detect.js";
import { agentNames } from "../../../src/agents/index.js";
import { digest, read } from "./helpers.js";

const CLAUDE_INIT = {
  type: "system",
  subtype: "init",
  cwd: "/p",
  session_id: "s",
  tools: [],
  model: "m",
  permissionMode: "default",
  apiKeySource: "none",
};
const CLAUDE_TEXT = {
  type: "assistant",
  message: { role: "assistant", content: [{ type: "text", text: "Hi." }] },
  parent_tool_use_id: null,
  session_id: "s",
};
const CODEX_TEXT = { type: "item.completed", item: { id: "i0", type: "agent_message", text: "Hi." } };

describe("createConversationReader", () => {
  it("reads every agent format by its --agent name", () => {
    expect([...conversationFormats].sort()).toEqual([...agentNames].sort());
    for (const name of agentNames) expect(createConversationReader(name).format).toBe(name);
  });

  it.each([
    ["auto", "claude", [CLAUDE_INIT, CLAUDE_TEXT]],
    ["auto", "codex", [{ type: "thread.started", thread_id: "t" }, CODEX_TEXT]],
    [undefined, "codex", [CODEX_TEXT]],
    ["no-such-agent", "codex", [CODEX_TEXT]],
  ])("given %s, detects %s from the first JSON events and replays what it held", (given, format, events) => {
    const reader = createConversationReader(given);
    expect(reader.format).toBeUndefined();
    const steps = events.flatMap((event) => reader.line(JSON.stringify(event)));
    expect(reader.format).toBe(format);
    expect(digest([...steps, ...reader.end()])).toEqual(["text: Hi."]);
  });

  it("never claims a stream of Codex events for Claude when told it is Claude's: the given format wins", () => {
    expect(read("claude", [CODEX_TEXT])).toEqual([]);
  });

  it.each([
    ["a line that is not JSON", "Error: connect ECONNRESET 160.79.104.10:443"],
    ["a JSON array", "[1,2]"],
    ["broken JSON", '{"type":"assistant","message":'],
    ["an unknown event", '{"type":"future_event","x":1}'],
    ["an empty line", ""],
    ["absurd nesting", "[".repeat(100_000)],
  ])("ignores %s, before and after detection", (_name, line) => {
    expect(read(undefined, [line, CLAUDE_INIT, line, CLAUDE_TEXT, line])).toEqual([{ kind: "text", text: "Hi." }]);
    expect(read("claude", [line])).toEqual([]);
  });

  it("CRLF, a byte order mark and leading blanks do not matter", () => {
    const lines = [`\uFEFF${JSON.stringify(CLAUDE_INIT)}\r`, `  ${JSON.stringify(CLAUDE_TEXT)}\r`];
    expect(read(undefined, lines)).toEqual([{ kind: "text", text: "Hi." }]);
  });

  it("takes Buffers, and reads each only during the call (a reused buffer is fine, held ones too)", () => {
    const reader = createConversationReader();
    const steps = [
      CLAUDE_INIT,
      { ...CLAUDE_TEXT, message: { role: "assistant", content: [{ type: "text", text: "y".repeat(40_000) }] } },
    ].flatMap((event) => {
      const buf = Buffer.from(JSON.stringify(event));
      const out = reader.line(buf);
      buf.fill(0x20);
      return out;
    });
    expect(steps).toEqual([{ kind: "text", text: "y".repeat(40_000) }]);
  });

  it("gives up after the detection limit of events: no steps, nothing held", () => {
    const reader = createConversationReader();
    for (let i = 0; i < DEFAULT_DETECT_MAX_EVENTS; i++) reader.line(JSON.stringify({ type: "unknown", i }));
    expect(reader.line(JSON.stringify(CLAUDE_INIT))).toEqual([]);
    expect(reader.line(JSON.stringify(CLAUDE_TEXT))).toEqual([]);
    expect(reader.format).toBeUndefined();
    expect(reader.end()).toEqual([]);
  });

  it("a stream that ends before its format is known yields nothing", () => {
    expect(read(undefined, [{ type: "unknown" }])).toEqual([]);
  });

  it("unicode survives whole: astral characters, escapes, in long and short texts", () => {
    const text = 'naïve 😀 \u2028 \\u0041 "q"';
    const long = "😀".repeat(10_000);
    const steps = read("claude", [
      {
        ...CLAUDE_TEXT,
        message: {
          role: "assistant",
          content: [
            { type: "text", text },
            { type: "text", text: long },
          ],
        },
      },
    ]);
    expect(steps).toEqual([
      { kind: "text", text },
      { kind: "text", text: long },
    ]);
  });
});

describe("events of a known type in a shape no agent writes", () => {
  const TYPES = [
    "user",
    "assistant",
    "result",
    "system",
    "item.started",
    "item.completed",
    "turn.failed",
    "error",
    "message",
    "tool_use",
    "tool_result",
    "tool_call",
    "text",
    "step_finish",
    "function_call",
    "function_call_output",
    "user.message",
    "assistant.message",
    "tool.execution_start",
    "tool.execution_complete",
    "session.error",
    "completion",
  ];
  const ODD = [null, 5, "x", [], [null, 5, "x", []], { type: 5 }, {}];
  const FIELDS = [
    "message",
    "content",
    "item",
    "part",
    "data",
    "tool_call",
    "tool_calls",
    "state",
    "error",
    "parameters",
    "arguments",
    "input",
    "result",
    "role",
    "id",
    "tool_id",
    "call_id",
  ];

  it.each(agentNames)("the %s reader never throws, and every step it yields is well formed", (format) => {
    const reader = createConversationReader(format);
    const steps: Step[] = [];
    for (const type of TYPES) {
      for (const odd of ODD) {
        for (const field of FIELDS) steps.push(...reader.line(JSON.stringify({ type, role: "assistant", [field]: odd })));
        steps.push(
          ...reader.line(
            JSON.stringify({
              type,
              message: { content: [odd] },
              item: { type: "command_execution", id: odd },
              part: { state: odd },
              data: odd,
            }),
          ),
        );
      }
    }
    steps.push(...reader.end());
    for (const step of steps) {
      if (step.kind === "tool") expect([step.id, step.name, step.summary, ...step.files].every((v) => typeof v === "string")).toBe(true);
      else expect(typeof step.text).toBe("string");
    }
  });
});
