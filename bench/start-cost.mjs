// What one CLI start costs, by figures that hold on a loaded shared machine: instructions
// (valgrind's callgrind, the whole node process; the lowest of ROUNDS runs) and page faults and
// CPU time (perf stat, with the children it starts; the median of 5 x ROUNDS runs). Wall-clock
// figures of short commands are noise when other processes share the two cores.
// Scenarios: --version, --help, a short watch-claude --dry-run of one Write, a push of one file
// (a fresh project and root each run, a reference server of the same build). NODE_EXTRA_CA_CERTS
// is dropped for the runs measured: it makes every node process read its certificates at start
// (about 400 M instructions here), which would hide the CLI's own cost.
// Run: npm run build && ROUNDS=3 node bench/start-cost.mjs [BIN] [version,help,dryrun,push]
//   BIN: another build's bin/uspark.js (before/after figures); valgrind and perf must be installed.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const bin = path.resolve(process.argv[2] ?? fileURLToPath(new URL("../bin/uspark.js", import.meta.url)));
const scenarios = (process.argv[3] ?? "version,help,dryrun,push").split(",");
const rounds = Number(process.env.ROUNDS ?? 3);
const env = { ...process.env, NO_COLOR: "1" };
delete env.NODE_EXTRA_CA_CERTS;
for (const tool of ["valgrind", "perf"]) {
  if (spawnSync(tool, ["--version"]).error) {
    console.error(`start-cost: ${tool} is not installed (apt-get install valgrind linux-perf)`);
    process.exit(1);
  }
}

const tmp = mkdtempSync(path.join(tmpdir(), "uspark-start-cost-"));
const port = 40000 + Math.floor(Math.random() * 20000);
const apiUrl = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, [bin, "serve", "--data", path.join(tmp, "data"), "--port", String(port), "--quiet"], {
  stdio: "ignore",
  env,
});
await untilServing();
let runs = 0;

try {
  for (const scenario of scenarios) console.log(`${scenario.padEnd(8)} ${await measure(scenario)}`);
} finally {
  server.kill();
  rmSync(tmp, { recursive: true, force: true });
}

async function untilServing() {
  for (let i = 0; i < 200; i++) {
    const up = await fetch(`${apiUrl}/api/projects`).then(
      () => true,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the reference server did not start");
}

async function measure(scenario) {
  const instructions = [];
  for (let i = 0; i < rounds; i++) {
    const { stderr } = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"], await prepare(scenario));
    instructions.push(Number(/Collected : (\d+)/.exec(stderr)[1]) / 1e6);
  }
  const faults = [];
  const cpuMs = [];
  for (let i = 0; i < rounds * 5; i++) {
    const { stderr } = run(["perf", "stat", "-x,", "-e", "task-clock,page-faults"], await prepare(scenario));
    for (const [value, , event] of stderr.split("\n").map((line) => line.split(","))) {
      if (event === "task-clock") cpuMs.push(Number(value));
      if (event === "page-faults") faults.push(Number(value));
    }
  }
  return `${Math.min(...instructions).toFixed(1)} M instructions, ${median(faults)} page faults, ${median(cpuMs).toFixed(0)} ms of CPU`;
}

/** A fresh root with one file, and what the scenario runs in it. */
async function prepare(scenario) {
  const root = path.join(tmp, `root-${++runs}`);
  mkdirSync(root);
  const file = path.join(root, "a.txt");
  writeFileSync(file, `hello ${runs}\n`);
  if (scenario === "version") return { args: ["--version"] };
  if (scenario === "help") return { args: ["--help"] };
  if (scenario === "dryrun") {
    const events = [
      { type: "system", subtype: "init", cwd: root, session_id: "s1" },
      {
        type: "assistant",
        message: { content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: file, content: "hello\n" } }] },
      },
      { type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] } },
    ];
    return {
      args: ["watch-claude", "--dry-run", "--root", root, "--quiet"],
      input: events.map((event) => JSON.stringify(event) + "\n").join(""),
    };
  }
  if (scenario === "push") {
    const id = `p${runs}`;
    const created = await fetch(`${apiUrl}/api/projects`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id }),
    });
    if (created.status !== 201) throw new Error(`creating project ${id}: ${created.status}`);
    return { args: ["push", "--project-id", id, "--api-url", apiUrl, "--root", root, "--quiet"] };
  }
  throw new Error(`unknown scenario ${scenario}`);
}

function run(tool, { args, input = "" }) {
  const result = spawnSync(tool[0], [...tool.slice(1), process.execPath, bin, ...args], { input, encoding: "utf8", cwd: tmp, env });
  if (result.status !== 0) throw new Error(`${tool[0]} uspark ${args.join(" ")}: exit ${result.status}\n${result.stderr.slice(-1000)}`);
  return result;
}

function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}
