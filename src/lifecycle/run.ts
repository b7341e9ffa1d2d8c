import { signalExitCode } from "../util/exit-codes.js";

/** `uspark run`: the exit code of a run, from the agent's exit and the sync's code. */

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The agent's failure wins (its code, or 128+n when signal n ended it); a clean exit leaves the sync's code. */
export function runExitCode(agent: AgentExit, sessionCode: number): number {
  if (agent.code !== null && agent.code !== 0) return agent.code;
  if (agent.signal !== null) return signalExitCode(agent.signal);
  return sessionCode;
}
