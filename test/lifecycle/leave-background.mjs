// A stand-in agent (or its wrapper script) that leaves a background process holding its stdout,
// as `npm run dev &` or a language server does, then ends:
//   node leave-background.mjs <pid-file> <exit code> <background: yes|no> [file]
// It prints the names of the USPARK_* variables it was given, writes <file> with a Claude-shaped
// Write event and its result, starts the background child (yes: it inherits stdout and lives until
// killed), writes "<agent pid> <background pid>" to <pid-file> and exits with <exit code>.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const [pidFile, code, background, file] = process.argv.slice(2);
const uspark = Object.keys(process.env).filter((name) => name.startsWith("USPARK_")).sort();
process.stdout.write(`env: ${uspark.join(",")}\n`);
if (file) {
  writeFileSync(file, "written\n");
  const call = { type: "assistant", session_id: "bg", message: { content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: file, content: "" } }] } };
  const result = { type: "user", session_id: "bg", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] } };
  process.stdout.write(JSON.stringify(call) + "\n" + JSON.stringify(result) + "\n");
}
let backgroundPid = 0;
if (background === "yes") {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "inherit", "ignore"], detached: true });
  child.unref();
  backgroundPid = child.pid;
}
writeFileSync(pidFile, `${process.pid} ${backgroundPid}\n`);
process.exitCode = Number(code);
