import { fileChange, includesAny, needle, outcome, stringField } from "./common.js";
import { patchTextChanges } from "./patch-text.js";
import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink, FileChange } from "./types.js";

/**
 * OpenCode, `opencode run --format json` (sst/opencode packages/opencode/src/cli/cmd/run.ts):
 * every line is `{ type, timestamp, sessionID, … }`; a finished tool call is one
 * `{ type: "tool_use", part: { type: "tool", tool, callID, state } }` event, sent once its
 * `state.status` is `completed` or `error`. So there is no call waiting at the end.
 * `edit`, `write` (and the older `multiedit`) name their file in `state.input.filePath`;
 * `apply_patch` lists what it did in `state.metadata.files[]`
 * (`{ filePath, type: "add" | "update" | "delete" | "move", movePath? }`,
 * packages/opencode/src/tool/apply_patch.ts). Without that list (older versions) the file
 * headers of `state.input.patchText` are read instead.
 */
export const opencode: AgentFormat = {
  name: "opencode",
  detect: (event) =>
    isObject(event) && typeof event.type === "string" && typeof event.sessionID === "string" && ("part" in event || event.type === "error"),
  create: (emit) => new OpenCodeParser(emit),
};

const TOOL_USE = needle("tool_use");
const TOOL_NEEDLES = ["edit", "write", "multiedit", "apply_patch"].map(needle);

class OpenCodeParser implements AgentParser {
  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (!line.includes(TOOL_USE) || !includesAny(line, TOOL_NEEDLES)) return;
    const event = parseEvent(line);
    const part = event?.part;
    if (event?.type !== "tool_use" || !isObject(part) || typeof part.tool !== "string") return;
    const state = part.state;
    if (!isObject(state)) return;
    if (state.status === "completed") for (const change of changesOf(part.tool, state)) this.emit(change);
    // An edit or write that failed wrote nothing; a patch that failed may have written its first files.
    else if (state.status === "error" && part.tool === "apply_patch") {
      for (const change of changesOf(part.tool, state)) this.emit(outcome(change, false));
    }
  }

  end(): void {}
}

/** What a finished call did, from its `state` (also read by the conversation reader). */
export function changesOf(tool: string, state: Record<string, unknown>): FileChange[] {
  switch (tool) {
    case "edit":
    case "write":
    case "multiedit": {
      const path = stringField(state.input, "filePath");
      return path === undefined ? [] : [fileChange(path, "write", tool, true)];
    }
    case "apply_patch": {
      const files = isObject(state.metadata) ? state.metadata.files : undefined;
      if (Array.isArray(files)) return files.flatMap((file) => patchFileChanges(file));
      const patchText = isObject(state.input) ? state.input.patchText : undefined;
      return typeof patchText === "string" ? patchTextChanges(patchText, "apply_patch").map((change) => outcome(change, true)) : [];
    }
    default:
      return [];
  }
}

function patchFileChanges(file: unknown): FileChange[] {
  const path = stringField(file, "filePath");
  if (path === undefined || !isObject(file)) return [];
  const movePath = stringField(file, "movePath");
  if (file.type === "delete") return [fileChange(path, "delete", "apply_patch", true)];
  if (movePath !== undefined && movePath !== path) {
    return [fileChange(path, "delete", "apply_patch", true), fileChange(movePath, "write", "apply_patch", true)];
  }
  return [fileChange(path, "write", "apply_patch", true)];
}
