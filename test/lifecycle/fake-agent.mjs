// A stand-in agent for `uspark run` tests. It writes each file named after `--`, prints a
// Claude-shaped stream-json record of the Write and its result, then ends as `how` says:
//   node fake-agent.mjs <how> -- file...
//   how: an exit code ("0", "3"); a signal to send itself ("SIGINT", "SIGTERM"); or
//        "on-SIGTERM": print "ready", wait, and do the writes in its SIGTERM handler, exit 143.
import { writeFileSync } from "node:fs";

const [how, , ...files] = process.argv.slice(2);
let id = 0;

function writeAll(label) {
  for (const file of files) {
    writeFileSync(file, `${label} ${file}\n`);
    const tool = `toolu_${++id}`;
    const call = { type: "assistant", session_id: "fake", message: { content: [{ type: "tool_use", id: tool, name: "Write", input: { file_path: file, content: "" } }] } };
    const result = { type: "user", session_id: "fake", message: { content: [{ type: "tool_result", tool_use_id: tool, content: "ok" }] } };
    process.stdout.write(JSON.stringify(call) + "\n" + JSON.stringify(result) + "\n");
  }
}

if (how === "on-SIGTERM") {
  process.on("SIGTERM", () => {
    writeAll("last words");
    process.exit(143);
  });
  setInterval(() => {}, 1000);
  process.stdout.write("ready\n");
} else if (how.startsWith("SIG")) {
  writeAll("before");
  process.kill(process.pid, how);
  setInterval(() => {}, 1000); // the signal ends it
} else {
  writeAll("written");
  // Bytes no JSON reader likes, and no final newline: they must still reach uspark's stdout as they are.
  process.stdout.write(Buffer.from([0xff, 0xfe, 0x0d, 0x0a, 0x00, 0x41]));
  process.exitCode = Number(how);
}
