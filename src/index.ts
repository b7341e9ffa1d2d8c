/**
 * uspark-watch as a library: `createWatcher` gives a Node program (one driving the Claude Agent
 * SDK, say) the same detection and sync as `uspark watch`.
 */
export { createWatcher, DEFAULTS, type Watcher, type WatcherOptions, type WatchSummary } from "./watcher/watcher.js";
export { AGENTS, agentNames } from "./agents/index.js";
export type { AgentFormat, AgentParser, FileChange } from "./agents/types.js";
export { escapeControl, Reporter, redactCredentials, type ReporterOptions } from "./report/reporter.js";
export { createPathPolicy, type PathDecision, type PathPolicy } from "./paths/paths.js";
export { UsageError } from "./config/config.js";
export { EXIT } from "./util/exit-codes.js";
export type { SyncResult } from "./sync/index.js";
