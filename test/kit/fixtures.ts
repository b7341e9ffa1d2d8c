import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { remoteFiles, startMemoryRef, tempDir, type RefServer } from "./sync.js";

/** Nothing listens on this port (discard): every request is refused, and retried until the flush timeout. */
export const UNREACHABLE = "http://127.0.0.1:9";

let nextId = 0;
/** One Claude Write call and its successful result, as two stream-json lines. */
export function writeEvents(file: string, content = "x"): string {
  const id = `toolu_${++nextId}`;
  return (
    JSON.stringify({
      type: "assistant",
      session_id: "s",
      message: { content: [{ type: "tool_use", id, name: "Write", input: { file_path: file, content } }] },
    }) +
    "\n" +
    JSON.stringify({ type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } }) +
    "\n"
  );
}

/** The remote paths in `<root>/.uspark/pending.json`. */
export function journaledPaths(root: string): string[] {
  const journal = JSON.parse(readFileSync(path.join(root, ".uspark", "pending.json"), "utf8")) as { entries: { path: string }[] };
  return journal.entries.map((entry) => entry.path).sort();
}

export interface PerTest {
  /** This test's temp project root. */
  root: string;
  /** The reference server, when the test (or `perTest`'s `server` option) started one; stopped after the test. */
  server: RefServer | undefined;
}

/** A fresh temp root for each test (and a reference server with `{ server: true }`), removed after it. */
export function perTest(prefix: string, options: { server?: boolean } = {}): PerTest {
  return fixture(prefix, options, beforeEach, afterEach);
}

/**
 * One temp root (and a reference server with `{ server: true }`) for all the tests of the calling
 * describe, removed after them: for tests that only read what a `beforeAll` set up there.
 */
export function perDescribe(prefix: string, options: { server?: boolean } = {}): PerTest {
  return fixture(prefix, options, beforeAll, afterAll);
}

type Hook = (run: () => Promise<void>) => void;

function fixture(prefix: string, options: { server?: boolean }, before: Hook, after: Hook): PerTest {
  const state: PerTest = { root: "", server: undefined };
  let cleanup = async () => {};
  before(async () => {
    ({ dir: state.root, cleanup } = await tempDir(prefix));
    if (options.server) state.server = await startMemoryRef();
  });
  after(async () => {
    await state.server?.stop();
    state.server = undefined;
    await cleanup();
  });
  return state;
}

/**
 * Several machines on one project ("p") of one reference server that wants `token`: a fresh
 * server for each test, a temp tree per machine (`machine`), all removed after the test. `env`
 * is what a machine's uspark runs with; `remote` the project's files as text.
 */
export function writersOnOneServer(token: string, prefix: string) {
  let dirs: { cleanup: () => Promise<void> }[] = [];
  const writers = {
    server: undefined as unknown as RefServer,
    async machine(name: string): Promise<string> {
      const made = await tempDir(`${prefix}${name}-`);
      dirs.push(made);
      return made.dir;
    },
    /** A directory the test made itself, removed with the machines'. */
    removeAfter(cleanup: () => Promise<void>): void {
      dirs.push({ cleanup });
    },
    env: () => ({ USPARK_API_URL: writers.server.url, USPARK_TOKEN: token, USPARK_PROJECT_ID: "p" }),
    remote: async () => new Map([...(await remoteFiles(writers.server.url, "p", token))].map(([p, b]) => [p, b.toString()])),
  };
  beforeEach(async () => {
    writers.server = await startMemoryRef(token, { projects: ["p"] });
  });
  afterEach(async () => {
    await writers.server.stop();
    await Promise.all(dirs.map((d) => d.cleanup()));
    dirs = [];
  });
  return writers;
}

/** Writes `text` at `rel` under `dir`, making its directories. */
export function writeIn(dir: string, rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), text);
}
