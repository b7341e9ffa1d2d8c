/** The sync session and what its users need of it (the watcher, the scans, the tests). */
export {
  createSyncSession,
  SyncSession,
  SyncInterrupted,
  type SyncOptions,
  type SyncTarget,
  type FinishOptions,
  type SessionParts,
} from "./session.js";
export type { SyncResult } from "./outcome.js";
export { ApiClient, ApiError } from "../transfer/client.js";
export { remindOfPending } from "./journal.js";
