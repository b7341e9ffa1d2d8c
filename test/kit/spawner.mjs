// The small process that starts a test worker's children: test/kit/spawner.ts says why.
// It spawns what the worker asks for, hands the worker the child's three stdio sockets before
// reading a byte of them, says when the child exits, and kills what is left when the worker goes.

import { spawn } from "node:child_process";

const children = new Map();

process.on("message", ({ id, command, args, cwd, env }) => {
  const child = spawn(command, args, { cwd, env });
  if (child.pid === undefined) {
    child.once("error", (error) => process.send({ id, error: { message: error.message, code: error.code } }));
    return;
  }
  children.set(id, child);
  // Node started reading stdout and stderr; nothing has come in before the event loop turns.
  child.stdout._handle.readStop();
  child.stderr._handle.readStop();
  // Sent sockets are closed here once the worker has them: the worker holds the only copies.
  process.send({ id, pid: child.pid, stdio: 0 }, child.stdin);
  process.send({ id, stdio: 1 }, child.stdout);
  process.send({ id, stdio: 2 }, child.stderr);
  child.once("exit", (code, signal) => {
    children.delete(id);
    process.send({ id, code, signal });
  });
});

process.once("disconnect", () => {
  for (const child of children.values()) child.kill("SIGKILL");
  process.exit(0);
});
