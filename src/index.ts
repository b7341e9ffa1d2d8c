/**
 * uspark-watch as a library: `createWatcher` gives a Node program (one driving the Claude Agent
 * SDK, say) the same detection and sync as `uspark watch`.
 */
export { createWatcher, DEFAULTS, type Watcher, type WatcherOptions, type WatchSummary } from "./watcher.js";
export { AGENTS, agentNames } from "./agents/index.js";
export type { AgentFormat, AgentParser, FileChange } from "./agents/types.js";
export { escapeControl, Reporter, redactCredentials, type ReporterOptions } from "./report.js";
export { createPathPolicy, type PathDecision, type PathPolicy } from "./paths.js";
export { UsageError } from "./config.js";
export { EXIT } from "./exit-codes.js";
export type { SyncResult } from "./sync/index.js";
