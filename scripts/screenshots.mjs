#!/usr/bin/env node
// The README's and docs/web-view.md's screenshots, made again from nothing: a reference server on
// a free loopback port, a small app pushed by a person, then a Claude session (written below in
// Claude Code's stream-json shape) played through `uspark watch-claude --transcript`, as the agent
// would have made it; then each page of the web view in headless Chromium, saved under
// docs/screens/. Run `npm run build` first; the web view changes, so run this again when it does.
//
//   node scripts/screenshots.mjs [--out docs/screens]

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { play, RECORDED_ROOT, sessionLines } from "./play-session.mjs";

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({ options: { out: { type: "string", default: path.join(repo, "docs", "screens") } } });
const uspark = path.join(repo, "bin", "uspark.js");
const PROJECT = "todo-api";

/** The app as a person left it before asking the agent: an HTTP API for a to-do list. */
const APP = {
  "package.json":
    JSON.stringify(
      { name: "todo-api", version: "0.1.0", type: "module", scripts: { start: "node src/server.js", test: "node --test" } },
      null,
      2,
    ) + "\n",
  "README.md": "# todo-api\n\nA small HTTP API for a to-do list.\n\n```sh\nnpm start   # listens on :3000\n```\n",
  "src/server.js": [
    'import http from "node:http";',
    'import { addTodo, listTodos } from "./todos.js";',
    "",
    "const server = http.createServer(async (req, res) => {",
    '  if (req.method === "GET" && req.url === "/todos") return send(res, 200, listTodos());',
    '  if (req.method === "POST" && req.url === "/todos") return send(res, 201, addTodo(await body(req)));',
    '  send(res, 404, { error: "not found" });',
    "});",
    "",
    "function send(res, status, value) {",
    '  res.writeHead(status, { "content-type": "application/json" });',
    "  res.end(JSON.stringify(value));",
    "}",
    "",
    "async function body(req) {",
    '  let text = "";',
    "  for await (const chunk of req) text += chunk;",
    "  return JSON.parse(text);",
    "}",
    "",
    "server.listen(3000);",
    "",
  ].join("\n"),
  "src/todos.js": [
    "const todos = [];",
    "",
    "export function listTodos() {",
    "  return todos;",
    "}",
    "",
    "export function addTodo({ title }) {",
    "  const todo = { id: todos.length + 1, title };",
    "  todos.push(todo);",
    "  return todo;",
    "}",
    "",
  ].join("\n"),
};

/** Claude Code's stream-json lines for one session: a prompt, reads, edits, a test run, a result. */
function agentSession() {
  const sessionId = "5f0c9e2a-4b7d-4e1a-9c3f-8d2b6a1e7f40";
  const file = (name) => `${RECORDED_ROOT}/${name}`;
  const lines = [
    {
      type: "system",
      subtype: "init",
      cwd: RECORDED_ROOT,
      session_id: sessionId,
      tools: ["Bash", "Edit", "Read", "Write"],
      model: "claude-sonnet-4-5-20250929",
      permissionMode: "acceptEdits",
    },
  ];
  lines.push({
    type: "user",
    message: { role: "user", content: [{ type: "text", text: "Let a todo be marked done (PATCH /todos/:id), and add tests." }] },
    session_id: sessionId,
  });
  let n = 0;
  const say = (text) =>
    lines.push({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] }, session_id: sessionId });
  const tool = (name, input, result, isError = false) => {
    const id = `toolu_${String(++n).padStart(2, "0")}`;
    lines.push({
      type: "assistant",
      message: { role: "assistant", content: [{ type: "tool_use", id, name, input }] },
      session_id: sessionId,
    });
    lines.push({
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: result, is_error: isError }] },
      session_id: sessionId,
    });
  };
  say("I'll read the store and the server first.");
  tool("Read", { file_path: file("src/todos.js") }, APP["src/todos.js"]);
  tool("Read", { file_path: file("src/server.js") }, APP["src/server.js"]);
  say("The store needs a `done` flag and a way to toggle it; then a route for it.");
  tool(
    "Edit",
    {
      file_path: file("src/todos.js"),
      old_string: "  const todo = { id: todos.length + 1, title };",
      new_string: "  const todo = { id: todos.length + 1, title, done: false };",
    },
    `The file ${file("src/todos.js")} has been updated.`,
  );
  tool(
    "Edit",
    {
      file_path: file("src/todos.js"),
      old_string: "  return todo;\n}\n",
      new_string:
        "  return todo;\n}\n\nexport function setDone(id, done) {\n  const todo = todos.find((t) => t.id === id);\n  if (todo) todo.done = done;\n  return todo;\n}\n",
    },
    `The file ${file("src/todos.js")} has been updated.`,
  );
  tool(
    "Edit",
    {
      file_path: file("src/server.js"),
      old_string: '  send(res, 404, { error: "not found" });',
      new_string:
        '  const done = /^\\/todos\\/(\\d+)$/.exec(req.url ?? "");\n  if (req.method === "PATCH" && done) {\n    const todo = setDone(Number(done[1]), (await body(req)).done === true);\n    return todo ? send(res, 200, todo) : send(res, 404, { error: "no such todo" });\n  }\n  send(res, 404, { error: "not found" });',
    },
    `The file ${file("src/server.js")} has been updated.`,
  );
  tool(
    "Edit",
    {
      file_path: file("src/server.js"),
      old_string: 'import { addTodo, listTodos } from "./todos.js";',
      new_string: 'import { addTodo, listTodos, setDone } from "./todos.js";',
    },
    `The file ${file("src/server.js")} has been updated.`,
  );
  tool(
    "Write",
    {
      file_path: file("test/todos.test.js"),
      content:
        'import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport { addTodo, setDone } from "../src/todos.js";\n\ntest("a new todo is not done", () => {\n  assert.equal(addTodo({ title: "milk" }).done, false);\n});\n\ntest("setDone marks it done", () => {\n  const todo = addTodo({ title: "bread" });\n  assert.equal(setDone(todo.id, true).done, true);\n});\n\ntest("setDone of an unknown id is undefined", () => {\n  assert.equal(setDone(999, true), undefined);\n});\n',
    },
    `File created successfully at: ${file("test/todos.test.js")}`,
  );
  tool(
    "Bash",
    { command: "npm test", description: "Run the tests" },
    "✔ a new todo is not done\n✔ setDone marks it done\n✔ setDone of an unknown id is undefined\nℹ tests 3\nℹ pass 3\nℹ fail 0",
  );
  tool(
    "Edit",
    {
      file_path: file("README.md"),
      old_string: "npm start   # listens on :3000\n```\n",
      new_string: 'npm start   # listens on :3000\nnpm test\n```\n\n`PATCH /todos/:id` with `{ "done": true }` marks a todo done.\n',
    },
    `The file ${file("README.md")} has been updated.`,
  );
  say("Done: todos have a `done` flag, `PATCH /todos/:id` sets it, and three tests cover it (all pass).");
  lines.push({
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 41230,
    num_turns: 9,
    result: "Todos can be marked done; tests added.",
    session_id: sessionId,
    total_cost_usd: 0.0841,
  });
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}

function startServer(data) {
  const server = spawn(process.execPath, [uspark, "serve", "--data", data, "--port", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let text = "";
    server.stderr.on("data", (chunk) => {
      text += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
      if (url) resolve({ server, url });
    });
    server.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening:\n${text}`)));
  });
}

/** Runs the CLI to its end; `input` (an async iterable of strings) is its stdin. */
function cli(args, cwd, input) {
  const child = spawn(process.execPath, [uspark, ...args], { cwd, stdio: [input ? "pipe" : "ignore", "ignore", "inherit"] });
  if (input) Readable.from(input).pipe(child.stdin);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`uspark ${args[0]} exited with ${code}`))));
  });
}

/** The server's pages, each shot at a laptop's width. */
async function shoot(url, out) {
  const profile = mkdtempSync(path.join(os.tmpdir(), "uspark-screens-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
    ],
    viewport: { width: 1100, height: 720 },
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    // A server started without a token still asks a browser to sign in: an empty token will do.
    await page.goto(`${url}/login`);
    await Promise.all([page.waitForURL(`${url}/`), page.getByRole("button", { name: "Sign in" }).click()]);
    const session = await (await fetch(`${url}/api/projects/${PROJECT}/sessions`)).json();
    const pages = {
      projects: "/",
      tree: `/p/${PROJECT}`,
      file: `/p/${PROJECT}/f/src/todos.js`,
      commits: `/p/${PROJECT}/commits`,
      commit: `/p/${PROJECT}/commits/4`,
      sessions: `/p/${PROJECT}/sessions`,
      session: `/p/${PROJECT}/sessions/${session.sessions[0].id}`,
    };
    for (const [name, page_] of Object.entries(pages)) {
      // A conversation reads downwards: its shot is taller, to show a few turns.
      await page.setViewportSize({ width: 1100, height: name === "session" ? 1400 : 720 });
      await page.goto(`${url}${page_}`);
      await page.screenshot({ path: path.join(out, `${name}.png`) });
      console.log(`${name}.png  ${page_}`);
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

const work = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-screens-")));
const app = path.join(work, PROJECT);
const { server, url } = await startServer(path.join(work, "data"));
try {
  const created = await fetch(`${url}/api/projects`, { method: "POST", body: JSON.stringify({ id: PROJECT }) });
  if (created.status !== 201) throw new Error(`creating ${PROJECT} answered ${created.status}`);
  for (const [name, text] of Object.entries(APP)) {
    mkdirSync(path.dirname(path.join(app, name)), { recursive: true });
    writeFileSync(path.join(app, name), text);
  }
  const remote = ["--project-id", PROJECT, "--api-url", url, "--root", app, "--quiet"];
  await cli(["push", ...remote], app);
  const recording = path.join(work, "session.jsonl");
  writeFileSync(recording, agentSession());
  // 250 ms between lines and a 100 ms debounce: the agent's edits land in a few commits, as in a live run.
  await cli(["watch-claude", ...remote, "--transcript", "--debounce", "100"], app, play(sessionLines(recording, app), app, 250));
  mkdirSync(values.out, { recursive: true });
  await shoot(url, values.out);
} finally {
  server.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
