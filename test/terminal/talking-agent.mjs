// A stand-in agent for the run view: a Claude stream-json session with a Write that works, a Bash
// call that fails, a line of plain text and a result, then exit. Each file named is written.
//   node talking-agent.mjs <ok|fail> <file> [long-summary-length]
import { writeFileSync } from "node:fs";

const [how, file, longLength = "0"] = process.argv.slice(2);
const out = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const call = (id, name, input) =>
  out({ type: "assistant", session_id: "talk", message: { content: [{ type: "tool_use", id, name, input }] } });
const result = (id, content, isError) =>
  out({
    type: "user",
    session_id: "talk",
    message: { content: [{ type: "tool_result", tool_use_id: id, content, ...(isError ? { is_error: true } : {}) }] },
  });

out({ type: "system", subtype: "init", session_id: "talk", cwd: process.cwd(), tools: [] });
out({ type: "assistant", session_id: "talk", message: { content: [{ type: "text", text: "I will write the file and run the tests." }] } });
call("toolu_1", "Write", { file_path: file, content: "hello\n" });
writeFileSync(file, "hello\n");
result("toolu_1", "File created successfully");
call("toolu_2", "Bash", { command: `npm test ${"x".repeat(Number(longLength))}` });
result("toolu_2", "Exit code 1\nnpm ERR! tests failed", true);
process.stdout.write("a plain line \u001b[31mas the agent printed it\u001b[0m\n");
if (how === "ok")
  out({ type: "result", subtype: "success", is_error: false, session_id: "talk", result: "Wrote the file.\nThe tests fail: see above." });
else
  out({ type: "result", subtype: "error_during_execution", is_error: true, session_id: "talk", errors: ["the model is overloaded (529)"] });
process.exitCode = how === "ok" ? 0 : 1;
