import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { AgentFormat, AgentParser, FileChange } from "../../src/agents/types.js";

export const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));

/** `fixtures/<agent>/session.jsonl` and its `expected.json`, or another stream: `<name>.jsonl` and `<name>.expected.json`. */
export function fixture(agent: string, name?: string): { session: string; expected: FileChange[] } {
  const [session, expected] = name === undefined ? ["session.jsonl", "expected.json"] : [`${name}.jsonl`, `${name}.expected.json`];
  return {
    session: readFileSync(`${FIXTURES}${agent}/${session}`, "utf8"),
    expected: JSON.parse(readFileSync(`${FIXTURES}${agent}/${expected}`, "utf8")) as FileChange[],
  };
}

/**
 * Feeds `text` line by line, as the line splitter does: split on "\n", each line a Buffer.
 * After each call the buffer is overwritten, since a line is only valid during the call.
 */
export function feed(parser: AgentParser, text: string | string[]): void {
  const lines = Array.isArray(text) ? text : text.split("\n");
  for (const line of lines) {
    const buf = Buffer.from(line);
    parser.line(buf);
    buf.fill(0x20);
  }
  parser.end();
}

/** Everything a format's parser reports for these lines (objects are JSON lines). */
export function run(format: AgentFormat, lines: Array<string | object>): FileChange[] {
  const changes: FileChange[] = [];
  feed(
    format.create((change) => changes.push(change)),
    lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))),
  );
  return changes;
}

export const R = "/workspace/project";

export function write(path: string, cause: string, extra: Partial<FileChange> = {}): FileChange {
  return { path, kind: "write", cause, confirmed: true, ...extra };
}

export function del(path: string, cause: string, extra: Partial<FileChange> = {}): FileChange {
  return { path, kind: "delete", cause, confirmed: true, ...extra };
}

/** JSON texts both JSON readers must read exactly as JSON.parse does: escapes, nesting, spacing. */
export const JSON_SAMPLES = [
  '{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":-1.5e3}',
  '  [ 1 , "two" , { } , [ ] ]  ',
  '"caf\\u00e9 \\"quoted\\" \\\\ back"',
  '{"k":"ünïcode ✓","n":0}',
  '{"a":"x\\\\"}',
  '{"a":"\\\\\\"","b":"\\\\\\\\"}',
  '{"ke\\"y":1}\r',
  "123",
];
