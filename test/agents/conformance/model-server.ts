import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One step of a scripted conversation: the model calls one tool, or ends with text. */
export interface ToolStep {
  tool: string;
  input: Record<string, unknown>;
  /** Send it as a freeform (custom) tool call with this text as its input: Codex's apply_patch. */
  freeform?: string;
}

/**
 * The scripts, by a marker the prompt holds ("SCRIPT:main", "SCRIPT:sub"): a conversation is the
 * script of the first marker of this list its request contains; its step is the number of tool
 * results the request already carries.
 */
export type Scripts = Array<[marker: string, steps: ToolStep[]]>;

export interface ModelServer {
  url: string;
  close(): Promise<void>;
}

interface Turn {
  step: ToolStep | undefined;
  callId: string;
}

/** A fake model on 127.0.0.1 that speaks the Anthropic, OpenAI (responses, chat) and Gemini APIs. */
export async function startModelServer(scripts: Scripts): Promise<ModelServer> {
  let calls = 0;
  const turnOf = (text: string, results: number): Turn => {
    const script = scripts.find(([marker]) => text.includes(marker));
    return { step: script?.[1][results], callId: `call_${++calls}` };
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
      if (path.endsWith("/messages")) return anthropic(res, json, text, turnOf);
      if (path.endsWith("/responses")) return responses(res, text, turnOf);
      if (path.endsWith("/chat/completions")) return chat(res, json, text, turnOf);
      if (path.includes(":streamGenerateContent") || path.includes(":generateContent")) return gemini(res, path, json, text, turnOf);
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

type TurnOf = (text: string, results: number) => Turn;

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
  for (const [event, data] of events) res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  res.end();
}

/** How many times `needle` occurs in `text`. */
function count(text: string, needle: RegExp): number {
  return text.match(needle)?.length ?? 0;
}

const DONE = "All done.";

function anthropic(res: ServerResponse, json: Record<string, unknown>, text: string, turnOf: TurnOf): void {
  const hasTools = Array.isArray(json.tools) && json.tools.length > 0;
  const turn = hasTools ? turnOf(text, count(text, /"type":"tool_result"/g)) : { step: undefined, callId: "" };
  const block = turn.step
    ? { type: "tool_use", id: `toolu_${turn.callId}`, name: turn.step.tool, input: turn.step.input }
    : { type: "text", text: DONE };
  const stop = turn.step ? "tool_use" : "end_turn";
  const message = { id: `msg_${turn.callId || "x"}`, type: "message", role: "assistant", model: String(json.model ?? "m"), stop_sequence: null };
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (json.stream !== true) return sendJson(res, { ...message, content: [block], stop_reason: stop, usage });
  const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
  const delta = block.type === "text" ? { type: "text_delta", text: DONE } : { type: "input_json_delta", partial_json: JSON.stringify(turn.step!.input) };
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

function responses(res: ServerResponse, text: string, turnOf: TurnOf): void {
  const turn = turnOf(text, count(text, /"type":"(function_call_output|custom_tool_call_output)"/g));
  const id = `resp_${turn.callId}`;
  const step = turn.step;
  const item = step
    ? step.freeform !== undefined
      ? { type: "custom_tool_call", id: `ctc_${turn.callId}`, call_id: turn.callId, name: step.tool, input: step.freeform, status: "completed" }
      : { type: "function_call", id: `fc_${turn.callId}`, call_id: turn.callId, name: step.tool, arguments: JSON.stringify(step.input), status: "completed" }
    : { type: "message", id: `msg_${turn.callId}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: DONE, annotations: [] }] };
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  sse(res, [
    ["response.created", { type: "response.created", response: { id, status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response: { id, status: "completed", output: [item], usage } }],
  ]);
}

function chat(res: ServerResponse, json: Record<string, unknown>, text: string, turnOf: TurnOf): void {
  const hasTools = Array.isArray(json.tools) && json.tools.length > 0;
  const turn = hasTools ? turnOf(text, count(text, /"role":"tool"/g)) : { step: undefined, callId: "x" };
  const base = { id: `chatcmpl-${turn.callId}`, object: "chat.completion.chunk", created: 1, model: String(json.model ?? "m") };
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const delta = turn.step
    ? { role: "assistant", tool_calls: [{ index: 0, id: turn.callId, type: "function", function: { name: turn.step.tool, arguments: JSON.stringify(turn.step.input) } }] }
    : { role: "assistant", content: DONE };
  const finish = turn.step ? "tool_calls" : "stop";
  if (json.stream !== true) {
    const message = turn.step ? { role: "assistant", content: null, tool_calls: delta.tool_calls } : { role: "assistant", content: DONE };
    return sendJson(res, { ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  sse(res, [
    [undefined, { ...base, choices: [{ index: 0, delta, finish_reason: null }] }],
    [undefined, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage }],
    [undefined, "[DONE]"],
  ]);
}

function gemini(res: ServerResponse, path: string, json: Record<string, unknown>, text: string, turnOf: TurnOf): void {
  const config = (json.generationConfig ?? json.config ?? {}) as Record<string, unknown>;
  const hasTools = Array.isArray(json.tools) && json.tools.length > 0;
  let parts: unknown[];
  if (!hasTools && config.responseMimeType === "application/json") parts = [{ text: '{"reasoning":"done","next_speaker":"user"}' }];
  else {
    const turn = hasTools ? turnOf(text, count(text, /"functionResponse"/g)) : { step: undefined, callId: "" };
    parts = turn.step ? [{ functionCall: { name: turn.step.tool, args: turn.step.input, id: turn.callId } }] : [{ text: DONE }];
  }
  const response = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "gemini-2.5-pro",
  };
  if (!path.includes(":streamGenerateContent")) return sendJson(res, response);
  sse(res, [[undefined, response]]);
}
