import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One step of a scripted conversation: the model calls one tool, or ends with text. */
export interface ToolStep {
  tool: string;
  input: Record<string, unknown>;
  /** Send it as a freeform (custom) tool call with this text as its input: Codex's apply_patch. */
  freeform?: string;
}

/** One turn of the model: a tool call, or several called in parallel (all in one answer). */
export type Turn = ToolStep | ToolStep[];

/**
 * The scripts, by a marker the prompt holds ("SCRIPT:main", "SCRIPT:sub"): a conversation is the
 * script of the first marker of this list its request contains; its turn is the first whose calls
 * are not all answered by the tool results the request already carries.
 */
export type Scripts = Array<[marker: string, turns: Turn[]]>;

export interface ModelServer {
  url: string;
  close(): Promise<void>;
}

/** What the model answers: its calls (none: it ends with text), each with the id it gets. */
interface Answer {
  calls: Array<{ step: ToolStep; callId: string }>;
  /** An id for the answer itself. */
  id: string;
}

/** A fake model on 127.0.0.1 that speaks the Anthropic, OpenAI (responses, chat) and Gemini APIs. */
export async function startModelServer(scripts: Scripts): Promise<ModelServer> {
  let calls = 0;
  const answerTo: AnswerTo = (text: string, results: number): Answer => {
    const turns = scripts.find(([marker]) => text.includes(marker))?.[1] ?? [];
    const steps = turnAfter(turns, results);
    return { calls: steps.map((step) => ({ step, callId: `call_${++calls}` })), id: `call_${++calls}` };
  };
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text || "{}") as Record<string, unknown>;
      } catch {
        // not JSON: answered as a request without tools
      }
      const path = (req.url ?? "").split("?")[0]!;
      if (path.endsWith("/messages")) return anthropic(res, json, text, answerTo);
      if (path.endsWith("/responses")) return responses(res, text, answerTo);
      if (path.endsWith("/chat/completions")) return chat(res, json, text, answerTo);
      if (path.includes(":streamGenerateContent") || path.includes(":generateContent")) return gemini(res, path, json, text, answerTo);
      if (path.endsWith("/count_tokens") || path.includes(":countTokens")) return sendJson(res, { input_tokens: 10, totalTokens: 10 });
      if (path.endsWith("/models")) return sendJson(res, { data: [{ id: "test-model", object: "model" }], models: [] });
      sendJson(res, {}, 404);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type AnswerTo = (text: string, results: number) => Answer;

/** The calls of the first turn not answered by `results` tool results; none once all are. */
function turnAfter(turns: readonly Turn[], results: number): ToolStep[] {
  let answered = 0;
  for (const turn of turns) {
    const steps = Array.isArray(turn) ? turn : [turn];
    if (answered + steps.length > results) return steps;
    answered += steps.length;
  }
  return [];
}

const NO_CALLS: Answer = { calls: [], id: "x" };

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString()));
  });
}

function sendJson(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function sse(res: ServerResponse, events: Array<[event: string | undefined, data: unknown]>): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [event, data] of events)
    res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  res.end();
}

/** How many times `needle` occurs in `text`. */
function count(text: string, needle: RegExp): number {
  return text.match(needle)?.length ?? 0;
}

const DONE = "All done.";

function anthropic(res: ServerResponse, json: Record<string, unknown>, text: string, answerTo: AnswerTo): void {
  const hasTools = Array.isArray(json.tools) && json.tools.length > 0;
  const answer = hasTools ? answerTo(text, count(text, /"type":"tool_result"/g)) : NO_CALLS;
  const blocks =
    answer.calls.length > 0
      ? answer.calls.map(({ step, callId }) => ({ type: "tool_use", id: `toolu_${callId}`, name: step.tool, input: step.input }))
      : [{ type: "text", text: DONE }];
  const stop = answer.calls.length > 0 ? "tool_use" : "end_turn";
  const message = { id: `msg_${answer.id}`, type: "message", role: "assistant", model: String(json.model ?? "m"), stop_sequence: null };
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (json.stream !== true) return sendJson(res, { ...message, content: blocks, stop_reason: stop, usage });
  const blockEvents = blocks.flatMap((block, index): Array<[string, unknown]> => {
    const start = "input" in block ? { ...block, input: {} } : { type: "text", text: "" };
    const delta =
      "input" in block ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) } : { type: "text_delta", text: DONE };
    return [
      ["content_block_start", { type: "content_block_start", index, content_block: start }],
      ["content_block_delta", { type: "content_block_delta", index, delta }],
      ["content_block_stop", { type: "content_block_stop", index }],
    ];
  });
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage } }],
    ...blockEvents,
    ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

function responses(res: ServerResponse, text: string, answerTo: AnswerTo): void {
  const answer = answerTo(text, count(text, /"type":"(function_call_output|custom_tool_call_output)"/g));
  const id = `resp_${answer.id}`;
  const items =
    answer.calls.length > 0
      ? answer.calls.map(({ step, callId }) =>
          step.freeform !== undefined
            ? { type: "custom_tool_call", id: `ctc_${callId}`, call_id: callId, name: step.tool, input: step.freeform, status: "completed" }
            : {
                type: "function_call",
                id: `fc_${callId}`,
                call_id: callId,
                name: step.tool,
                arguments: JSON.stringify(step.input),
                status: "completed",
              },
        )
      : [
          {
            type: "message",
            id: `msg_${answer.id}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: DONE, annotations: [] }],
          },
        ];
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  sse(res, [
    ["response.created", { type: "response.created", response: { id, status: "in_progress", output: [] } }],
    ...items.flatMap((item, output_index): Array<[string, unknown]> => [
      ["response.output_item.added", { type: "response.output_item.added", output_index, item }],
      ["response.output_item.done", { type: "response.output_item.done", output_index, item }],
    ]),
    ["response.completed", { type: "response.completed", response: { id, status: "completed", output: items, usage } }],
  ]);
}

function chat(res: ServerResponse, json: Record<string, unknown>, text: string, answerTo: AnswerTo): void {
  const hasTools = Array.isArray(json.tools) && json.tools.length > 0;
  const answer = hasTools ? answerTo(text, count(text, /"role":"tool"/g)) : NO_CALLS;
  const base = { id: `chatcmpl-${answer.id}`, object: "chat.completion.chunk", created: 1, model: String(json.model ?? "m") };
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const toolCalls = answer.calls.map(({ step, callId }, index) => ({
    index,
    id: callId,
    type: "function",
    function: { name: step.tool, arguments: JSON.stringify(step.input) },
  }));
  const delta = toolCalls.length > 0 ? { role: "assistant", tool_calls: toolCalls } : { role: "assistant", content: DONE };
  const finish = toolCalls.length > 0 ? "tool_calls" : "stop";
  if (json.stream !== true) {
    const message =
      toolCalls.length > 0 ? { role: "assistant", content: null, tool_calls: toolCalls } : { role: "assistant", content: DONE };
    return sendJson(res, { ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  // One chunk per call, as OpenAI streams them: some clients read only the first call of a chunk.
  const deltas =
    toolCalls.length > 0
      ? toolCalls.map((call, i) => (i === 0 ? { role: "assistant", tool_calls: [call] } : { tool_calls: [call] }))
      : [delta];
  sse(res, [
    ...deltas.map((d): [undefined, unknown] => [undefined, { ...base, choices: [{ index: 0, delta: d, finish_reason: null }] }]),
    [undefined, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage }],
    [undefined, "[DONE]"],
  ]);
}

function gemini(res: ServerResponse, path: string, json: Record<string, unknown>, text: string, answerTo: AnswerTo): void {
  const config = (json.generationConfig ?? json.config ?? {}) as Record<string, unknown>;
  const hasTools = Array.isArray(json.tools) && json.tools.length > 0;
  let parts: unknown[];
  if (!hasTools && config.responseMimeType === "application/json") parts = [{ text: '{"reasoning":"done","next_speaker":"user"}' }];
  else {
    const answer = hasTools ? answerTo(text, count(text, /"functionResponse"/g)) : NO_CALLS;
    parts =
      answer.calls.length > 0
        ? answer.calls.map(({ step, callId }) => ({ functionCall: { name: step.tool, args: step.input, id: callId } }))
        : [{ text: DONE }];
  }
  const response = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "gemini-2.5-pro",
  };
  if (!path.includes(":streamGenerateContent")) return sendJson(res, response);
  sse(res, [[undefined, response]]);
}
