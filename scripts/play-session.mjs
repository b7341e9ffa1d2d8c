#!/usr/bin/env node
// Plays a recorded Claude Code stream-json session as if an agent were running it: writes the
// lines to stdout one by one and, before each successful tool result, applies that tool's edit
// to the files under --root (the recording's /workspace/project is replaced by --root).
//
//   node scripts/play-session.mjs fixtures/claude/session.jsonl --root /tmp/proj [--delay 20] | uspark watch-claude ...

import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const RECORDED_ROOT = "/workspace/project";

/** The session's lines with the recorded root replaced by `root`. */
export function sessionLines(file, root) {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.split(RECORDED_ROOT).join(root));
}

/** Applies the edit of one Claude tool call to disk, as Claude Code would have. */
export function applyToolUse(block, root) {
  const input = block.input ?? {};
  const file = input.file_path ?? input.notebook_path;
  if (typeof file !== "string") return;
  const abs = path.resolve(root, file);
  if (abs !== root && !abs.startsWith(root + path.sep)) return; // the demo never writes outside its project
  mkdirSync(path.dirname(abs), { recursive: true });
  const current = existsSync(abs) ? readFileSync(abs, "utf8") : "";
  switch (block.name) {
    case "Write":
      writeFileSync(abs, input.content ?? "");
      break;
    case "Edit":
      writeFileSync(
        abs,
        current.includes(input.old_string) ? current.replace(input.old_string, input.new_string) : current + input.new_string + "\n",
      );
      break;
    case "MultiEdit":
      writeFileSync(
        abs,
        (input.edits ?? []).reduce(
          (text, edit) => (text.includes(edit.old_string) ? text.replace(edit.old_string, edit.new_string) : text + edit.new_string + "\n"),
          current,
        ),
      );
      break;
    case "NotebookEdit":
      writeFileSync(
        abs,
        JSON.stringify(
          { cells: [{ id: input.cell_id, cell_type: "code", source: input.new_source }], nbformat: 4, nbformat_minor: 5 },
          null,
          1,
        ),
      );
      break;
  }
}

export async function* play(lines, root, delayMs = 0) {
  const calls = new Map();
  for (const line of lines) {
    let event;
    try {
      event = JSON.parse(line);
    } catch {
      event = undefined;
    }
    const blocks = Array.isArray(event?.message?.content) ? event.message.content : [];
    for (const block of blocks) {
      if (event.type === "assistant" && block.type === "tool_use") calls.set(block.id, block);
      if (event.type === "user" && block.type === "tool_result" && block.is_error !== true && calls.has(block.tool_use_id)) {
        applyToolUse(calls.get(block.tool_use_id), root);
      }
    }
    yield line + "\n";
    if (delayMs) await sleep(delayMs);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
  const root = path.resolve(option("--root", process.cwd()));
  for await (const line of play(sessionLines(args[0], root), root, Number(option("--delay", "0")))) {
    if (!process.stdout.write(line)) await new Promise((resolve) => process.stdout.once("drain", resolve));
  }
}
