import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stdoutHeldPastGrace } from "../../src/lifecycle/agent-process.js";
import { captureReporter } from "../kit/sync.js";

const GRACE_MS = 100;

/** An agent that has exited, its stdout still open; `gaveUp()` says whether the run stopped reading it. */
function exitedAgent() {
  const stdout = new PassThrough();
  const child = { stdout, spawnfile: "agent" } as unknown as Parameters<typeof stdoutHeldPastGrace>[0];
  let gaveUp = false;
  void stdoutHeldPastGrace(child, Promise.resolve({ code: 0, signal: null }), GRACE_MS, captureReporter().reporter).then(
    () => (gaveUp = true),
  );
  return { stdout, gaveUp: () => gaveUp };
}

describe("stdoutHeldPastGrace", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("should stop reading an agent's stdout held open past the grace (a process it left behind)", async () => {
    const agent = exitedAgent();
    agent.stdout.resume(); // read, as the session does: nothing comes, the pipe stays open
    await vi.advanceTimersByTimeAsync(GRACE_MS + 1);
    expect(agent.gaveUp()).toBe(true);
  });

  it("should not while the run itself does not read it (a slow reader of its stdout, the transcript's spool), and never once it ends", async () => {
    const agent = exitedAgent();
    agent.stdout.write(Buffer.alloc(64 * 1024)); // the agent's last output, waiting for us
    agent.stdout.pause();
    await vi.advanceTimersByTimeAsync(20 * GRACE_MS);
    expect(agent.gaveUp()).toBe(false);
    agent.stdout.resume();
    agent.stdout.end();
    await vi.advanceTimersByTimeAsync(20 * GRACE_MS);
    expect(agent.gaveUp()).toBe(false);
  });
});
