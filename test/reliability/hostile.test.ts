// Hostile paths (issue #6, part 4): whatever path an agent's stream names, nothing outside the
// project root (or under .git/) leaves the machine, no symlink or redirect is followed, each case
// gives one warning, and the token goes to the configured API origin only and is printed,
// journaled or logged nowhere.

import { mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, startCli } from "../kit/cli.js";
import { startRecorder, startRef, eventually, type Action, type Proxy, type RefServer, type SeenRequest } from "../kit/sync.js";
import { cliEnv, expectNoToken, expectTokenOnlyToApi, faultProxy, newToken, TIMEOUT_MS, workspace } from "./harness.js";
import { jsonRecords, listRemote, readJournalFile } from "./session.js";

/** What a leaked file would carry: it must never reach the proxy, the server or its data dir. */
const SECRET = "SECRET-7f3a9c-do-not-push";

let ws: Awaited<ReturnType<typeof workspace>>;
let root: string;
let outside: string;
let token: string;
let server: RefServer;
let proxy: Proxy;
let recorder: Awaited<ReturnType<typeof startRecorder>>;
let rule: (req: SeenRequest) => Action | undefined;
/** What the running session's CLI has written to stderr so far: a rule may wait for an event it logs. */
let liveStderr = "";

beforeEach(async () => {
  ws = await workspace("uspark-hostile-");
  root = ws.root;
  outside = path.join(ws.base, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.txt"), `${SECRET} outside\n`);
  token = newToken();
  server = await startRef(token, { projects: ["hostile"] });
  recorder = await startRecorder();
  rule = () => undefined;
  proxy = await faultProxy(server.url, (req) => rule(req));
});

afterEach(async () => {
  await proxy.close();
  await recorder.close();
  await server.stop();
  await ws.cleanup();
});

let nextId = 0;
const init = () => JSON.stringify({ type: "system", subtype: "init", cwd: root, session_id: "hostile", tools: ["Write"] });
const toolUse = (id: string, filePath: string, content: string) =>
  JSON.stringify({
    type: "assistant",
    session_id: "hostile",
    message: { content: [{ type: "tool_use", id, name: "Write", input: { file_path: filePath, content } }] },
  });
const toolResult = (id: string) =>
  JSON.stringify({ type: "user", session_id: "hostile", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } });

interface Write {
  /** The path as the agent writes it in its event. */
  filePath: string;
  /** Applies the write to disk, as the agent's tool did (default: write through the path). */
  apply?: () => void;
}

interface Outcome {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  records: Record<string, unknown>[];
  warnings: Record<string, unknown>[];
  journal: Awaited<ReturnType<typeof readJournalFile>>;
  remote: string[];
}

/**
 * One session: a harmless Write of ok.txt, then the hostile writes, each applied to disk before
 * its result line (contents carry SECRET). Runs the built CLI with --verbose --log-format json
 * (or text) and the file watcher on, as users run it.
 */
async function session(
  writes: Write[],
  options: { format?: "json" | "text"; exitCode?: number; extraArgs?: string[] } = {},
): Promise<Outcome> {
  const format = options.format ?? "json";
  const lines: { line: string; apply?: () => void }[] = [{ line: init() }];
  const ok = `ok-${++nextId}`;
  lines.push({
    line: toolUse(ok, path.join(root, "ok.txt"), "harmless"),
    apply: () => writeFileSync(path.join(root, "ok.txt"), "harmless\n"),
  });
  lines.push({ line: toolResult(ok) });
  for (const write of writes) {
    const id = `evil-${++nextId}`;
    lines.push({ line: toolUse(id, write.filePath, SECRET) });
    lines.push({ line: toolResult(id), apply: write.apply ?? (() => writeFileSync(path.resolve(root, write.filePath), `${SECRET}\n`)) });
  }
  const args = [
    "watch-claude",
    "--project-id",
    "hostile",
    "--api-url",
    proxy.url,
    "--root",
    root,
    "--debounce",
    "30",
    "--verbose",
    "--log-format",
    format,
    ...(options.extraArgs ?? []),
  ];
  const { child, result } = await startCli(args, { cwd: root, env: cliEnv(ws.home, token), timeoutMs: 30_000 });
  liveStderr = "";
  child.stderr.on("data", (chunk: Buffer) => (liveStderr += chunk.toString()));
  const input: Buffer[] = [];
  for (const { line, apply } of lines) {
    apply?.();
    const bytes = Buffer.from(line + "\n");
    input.push(bytes);
    child.stdin.write(bytes);
  }
  child.stdin.end();
  const done = await result;
  expect(done.stdout.equals(Buffer.concat(input)), "stdout is stdin").toBe(true);

  const records = format === "json" ? jsonRecords(done.stderr) : [];
  const warnings =
    format === "json"
      ? records.filter((r) => r.level === "warn")
      : done.stderr
          .split("\n")
          .filter((l) => l.startsWith("uspark: warning:"))
          .map((message) => ({ message }));
  const journal = await readJournalFile(root);
  const remote = (await listRemote(server.url, "hostile", token)).files.map((f) => f.path);

  // Nothing secret went anywhere: not in any request, not in the server's data, not listed.
  for (const req of proxy.seen) expect(req.body.includes(SECRET), `${req.method} ${req.url} carries the secret`).toBe(false);
  expect(blobsContaining(server.dataDir, SECRET)).toEqual([]);
  // The token: only to the configured origin, and printed, journaled or logged nowhere.
  expectTokenOnlyToApi(proxy, token);
  expect(recorder.seen).toEqual([]);
  expectNoToken(token, { stdout: done.stdout, stderr: done.stderr, journal: journal.text });
  expect(done.code, done.stderr).toBe(options.exitCode ?? 0);
  return { code: done.code, stdout: done.stdout, stderr: done.stderr, records, warnings, journal, remote };
}

function blobsContaining(dataDir: string, marker: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else if (readFileSync(abs).includes(marker)) found.push(abs);
    }
  };
  walk(dataDir);
  return found;
}

/**
 * The hostile paths, each with what it needs on disk (made here) and the warning it must give:
 * outside the root in every spelling, through symlinks, names the API cannot hold, .git/.
 */
function hostileCases(): { name: string; write: Write; mention: string | RegExp }[] {
  const writeOutside = () => writeFileSync(path.join(outside, "secret.txt"), `${SECRET}\n`);
  symlinkSync(path.join(outside, "secret.txt"), path.join(root, "link.txt"));
  symlinkSync(outside, path.join(root, "linkdir"));
  mkdirSync(`${root}-evil`);
  mkdirSync(path.join(root, ".git"));
  const longDirs = Array.from({ length: 5 }, (_, i) => `${String(i).repeat(200)}`);
  mkdirSync(path.join(root, ...longDirs), { recursive: true });
  const outsideDotDot = `${root}/src/../../outside/secret.txt`;
  return [
    {
      name: "a relative path whose .. segments climb out of the root",
      write: { filePath: "../outside/secret.txt", apply: writeOutside },
      mention: /refused \.\.\/outside\/secret\.txt: outside the project root/,
    },
    {
      name: "an absolute path with .. segments that leaves the root",
      write: { filePath: outsideDotDot, apply: writeOutside },
      mention: `refused ${outsideDotDot}: outside the project root`,
    },
    {
      name: "an absolute path outside the root",
      write: { filePath: path.join(outside, "secret.txt") },
      mention: `refused ${path.join(outside, "secret.txt")}: outside the project root`,
    },
    {
      name: "the sibling prefix: <base>/proj-evil is not inside <base>/proj",
      write: { filePath: `${root}-evil/secret.txt` },
      mention: `refused ${root}-evil/secret.txt: outside the project root`,
    },
    {
      name: "a symlinked file inside the root that points outside",
      write: { filePath: path.join(root, "link.txt") },
      mention: /link\.txt: it resolves through a symlink to .*outside/,
    },
    {
      name: "a file under a symlinked directory that points outside",
      write: { filePath: path.join(root, "linkdir", "secret.txt") },
      mention: /linkdir\/secret\.txt: it resolves through a symlink to .*outside/,
    },
    {
      name: "a NUL byte in the path",
      write: { filePath: `${root}/a\u0000b.txt`, apply: () => {} },
      mention: /the path contains a NUL byte/,
    },
    {
      name: "backslashes in the path (a legal file name here, never a project path)",
      write: { filePath: path.join(root, "sub\\..\\..\\outside\\secret.txt") },
      mention: /path contains a backslash/,
    },
    {
      name: "an overlong path: a real file over the API's 1024-byte limit",
      write: { filePath: path.join(root, ...longDirs, "x".repeat(100) + ".txt") },
      mention: /x{100}\.txt.*longer than 1024 bytes/,
    },
    {
      name: "an overlong path: longer than the system allows (ENAMETOOLONG)",
      write: { filePath: path.join(root, ...Array.from({ length: 30 }, () => "d".repeat(250)), "f.txt"), apply: () => {} },
      mention: /d{250}\/f\.txt.*longer than 1024 bytes/,
    },
    {
      name: ".git/config",
      write: { filePath: path.join(root, ".git", "config") },
      mention: /not synced \.git\/config: .git\/, node_modules\/, .uspark\/ are never synced/,
    },
  ];
}

/** The harmless file went through, the hostile one did not, and it cost exactly one warning. */
function expectRefusedOnce(outcome: Outcome, mention: string | RegExp, window?: RegExp) {
  expect(outcome.remote).toEqual(["ok.txt"]);
  const messages = outcome.warnings.map((w) => String(w.message)).filter((message) => window === undefined || !window.test(message));
  expect(messages, `exactly one warning: ${messages.join(" / ")}`).toHaveLength(1);
  if (typeof mention === "string") expect(messages[0]).toContain(mention);
  else expect(messages[0]).toMatch(mention);
}

describe("hostile paths in the agent's stream: never pushed, never followed, one warning each", { timeout: TIMEOUT_MS }, () => {
  // One session for all of them (a CLI start each cost most of this file's time): each gives its
  // own warning, once, and the harmless file still goes through.
  it("each hostile path in turn, JSON log: one warning each, naming it and why; nothing but ok.txt pushed", async () => {
    const cases = hostileCases();
    const outcome = await session(
      cases.map((c) => c.write),
      { exitCode: 1 },
    );
    expect(outcome.remote).toEqual(["ok.txt"]);
    const messages = outcome.warnings.map((w) => String(w.message));
    for (const { name, mention } of cases) {
      const matching = messages.filter((message) => (typeof mention === "string" ? message.includes(mention) : mention.test(message)));
      expect(matching, `${name}: exactly one warning; all of them: ${messages.map((m) => m.slice(0, 160)).join(" / ")}`).toHaveLength(1);
    }
    expect(messages).toHaveLength(cases.length);
    // In-root files the API cannot hold are not synced: exit 1, listed (defect 10).
    expect(outcome.stderr).toContain("a backslash in the name cannot be stored remotely");
    expect(outcome.stderr).toContain("a path over 1024 bytes cannot be stored remotely");
  });

  it("TOCTOU: a file swapped for a symlink between detection and read is not followed", async () => {
    const target = path.join(root, "target.txt");
    // The batch's first request is held until the swap is done: detection saw a regular file
    // inside the root, the read finds a symlink to a secret outside.
    rule = (req) =>
      req.url.endsWith("/files")
        ? {
            kind: "forward-after",
            before: () => {
              // Swapped in one step (a rename over it), so no read sees the file absent in between.
              symlinkSync(path.join(outside, "secret.txt"), `${target}.swap`);
              renameSync(`${target}.swap`, target);
            },
          }
        : undefined;
    const outcome = await session([{ filePath: target, apply: () => writeFileSync(target, "innocent\n") }], { exitCode: 1 });
    // Whoever notices first says it: the engine's read, or the path policy on the file watcher's event.
    expectRefusedOnce(outcome, /target\.txt: (it is a symlink|it resolves through a symlink|not a regular file here \(a symlink)/);
  });

  it("TOCTOU: a directory swapped for a symlink between detection and read is not followed (the opened descriptor's real path is checked)", async () => {
    const dir = path.join(root, "sub");
    mkdirSync(dir);
    writeFileSync(path.join(outside, "target.txt"), `${SECRET} swapped in\n`);
    // The first listing is held until the CLI has detected the write (its debug line), then the
    // swap is made: detection saw a directory inside the root, and every read comes after the
    // listing, so after the swap. Under load the listing was asked for before the stream's
    // events were read: the swap came before the detection, which saw the symlink.
    let swapped = false;
    rule = (req) =>
      req.url.endsWith("/files") && !swapped
        ? {
            kind: "forward-after",
            before: async () => {
              swapped = true;
              await eventually(() => liveStderr.includes('"detected sub/target.txt'), 20_000, "the CLI to detect sub/target.txt");
              renameSync(dir, path.join(ws.base, "moved-away"));
              symlinkSync(outside, dir);
            },
          }
        : undefined;
    const outcome = await session(
      [{ filePath: path.join(dir, "target.txt"), apply: () => writeFileSync(path.join(dir, "target.txt"), "innocent\n") }],
      {
        exitCode: 1,
      },
    );
    // The swap takes two steps (a directory cannot be renamed over by a symlink): a scan that
    // falls between them finds sub/ gone and says so, which is true and no hostile path.
    expectRefusedOnce(outcome, /sub\/target\.txt: .*outside the project root/, /^cannot read directory sub: ENOENT/);
  });

  it("a server answering with a redirect to another origin: not followed, the token never reaches it", async () => {
    rule = (req) => ({ kind: "answer", status: 307, headers: { location: `${recorder.url}${req.url}` } });
    const outcome = await session([], { exitCode: 1 });
    expect(outcome.remote).toEqual([]);
    const stopped = outcome.records.filter((r) => r.event === "sync-stopped");
    expect(stopped).toHaveLength(1);
    expect(String(stopped[0]!.message)).toMatch(/redirect to http:\/\/127\.0\.0\.1:\d+; redirects are not followed/);
    expect(outcome.warnings).toEqual([]);
    // The harmless file is journaled for `push --pending`, without the token.
    expect(outcome.journal.entries.map((e) => e.path)).toEqual(["ok.txt"]);
    // Only the one request that got the redirect; nothing after syncing stopped.
    expect(proxy.seen).toHaveLength(1);
  });

  it("a server that echoes the token in its error answers: masked in the log, kept out of the journal", async () => {
    // A buggy or hostile server quotes the request's Authorization header back.
    rule = (req) =>
      req.method === "POST"
        ? { kind: "answer", status: 400, body: { error: "bad_request", message: `refused for ${String(req.headers.authorization)}` } }
        : undefined;
    const outcome = await session([], { exitCode: 1 });
    expect(outcome.remote).toEqual([]);
    expect(outcome.journal.entries.map((e) => e.path)).toEqual(["ok.txt"]);
    expect(outcome.journal.entries[0]!.reason).toContain("400 bad_request");
  });

  it("a tampered journal: push --pending refuses entries outside the root or through a symlink", async () => {
    symlinkSync(outside, path.join(root, "linkdir"));
    writeFileSync(path.join(root, "ok.txt"), "harmless\n");
    const entry = (remote: string, local: string) => ({
      apiUrl: proxy.url,
      projectId: "hostile",
      path: remote,
      local,
      reason: "tampered",
      time: new Date().toISOString(),
    });
    mkdirSync(path.join(root, ".uspark"));
    writeFileSync(
      path.join(root, ".uspark", "pending.json"),
      JSON.stringify({
        version: 1,
        entries: [
          entry("ok.txt", path.join(root, "ok.txt")),
          entry("stolen-1.txt", path.join(outside, "secret.txt")),
          entry("stolen-2.txt", `${root}/../outside/secret.txt`),
          entry("stolen-3.txt", path.join(root, "linkdir", "secret.txt")),
          entry("../stolen-4.txt", path.join(root, "ok.txt")),
        ],
      }),
    );
    const push = await runCli(
      ["push", "--pending", "--project-id", "hostile", "--api-url", proxy.url, "--root", root, "--verbose", "--log-format", "json"],
      {
        cwd: root,
        env: cliEnv(ws.home, token),
      },
    );
    expect(push.code).toBe(1);
    expect((await listRemote(server.url, "hostile", token)).files.map((f) => f.path)).toEqual(["ok.txt"]);
    for (const req of proxy.seen) expect(req.body.includes(SECRET)).toBe(false);
    expect(blobsContaining(server.dataDir, SECRET)).toEqual([]);
    const warnings = jsonRecords(push.stderr).filter((r) => r.level === "warn");
    for (const stolen of ["stolen-1.txt", "stolen-2.txt", "stolen-3.txt"])
      expect(
        warnings.filter((w) => String(w.message).includes(stolen)),
        push.stderr,
      ).toHaveLength(1);
    expectTokenOnlyToApi(proxy, token);
    expectNoToken(token, { stdout: push.stdout, stderr: push.stderr, journal: (await readJournalFile(root)).text });
  });

  it("all of them in one session, text log: one warning per path, nothing pushed", async () => {
    const writes = hostileCases().map((c) => c.write);
    // The backslash and the 1024-byte files are in the root: not synced, so exit 1; the rest are the agent's mistakes.
    const outcome = await session(writes, { format: "text", exitCode: 1 });
    expect(outcome.remote).toEqual(["ok.txt"]);
    expect(outcome.warnings).toHaveLength(writes.length);
    expect(outcome.stderr).toMatch(/2 files not synced; 1 file pushed/);
  });
});
