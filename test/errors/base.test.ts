import { describe, expect, it } from "vitest";
import { MultipartError } from "../../src/api/multipart-reader.js";
import { UsageError } from "../../src/config/config.js";
import { UsparkError } from "../../src/errors/base.js";
import { errorCode } from "../../src/errors/text.js";
import { RewoundError } from "../../src/reconcile/lineage.js";
import { LocalChanged, WriteRefused } from "../../src/reconcile/local-tree.js";
import { HttpError } from "../../src/server/http.js";
import { ProjectNotFoundError, ProjectUnavailableError, StoreSetupError, StoreUnavailableError } from "../../src/server/store.js";
import { StateDirError } from "../../src/state/state-dir.js";
import { RootLockHeld } from "../../src/state/state-lock.js";
import { SyncInterrupted } from "../../src/sync/session.js";
import { TranscriptFailed, TranscriptsNotSupported } from "../../src/transcript/upload.js";
import { ApiError } from "../../src/transfer/api-error.js";
import { TransportError } from "../../src/transfer/connections.js";

/** uspark's errors share one base with a stable code; each keeps its class, its name and its message. */
const made: [Error, string, string][] = [
  [new UsageError("bad flag", "a hint"), "UsageError", "usage"],
  [new StateDirError("x"), "StateDirError", "state_dir"],
  [new RootLockHeld("/r", 7), "RootLockHeld", "root_lock_held"],
  [new SyncInterrupted("x"), "SyncInterrupted", "sync_interrupted"],
  [new LocalChanged("x"), "LocalChanged", "local_changed"],
  [new WriteRefused("x"), "WriteRefused", "write_refused"],
  [new TranscriptFailed("x"), "TranscriptFailed", "transcript_failed"],
  [new TranscriptsNotSupported("x"), "TranscriptsNotSupported", "transcripts_not_supported"],
  [new MultipartError("x"), "Error", "multipart"],
  [new ProjectNotFoundError("p"), "Error", "project_not_found"],
  [new ProjectUnavailableError("x"), "Error", "project_unavailable"],
  [new StoreUnavailableError("x"), "Error", "store_unavailable"],
  [new StoreSetupError("x"), "Error", "EUSAGE"],
  [new TransportError("x", "BODY_TIMEOUT"), "TransportError", "BODY_TIMEOUT"],
  [new ApiError("x", { code: "conflict", status: 409 }), "ApiError", "conflict"],
  [new RewoundError("why"), "ApiError", "rewound"],
  [new HttpError(404, "not_found", "x"), "Error", "not_found"],
];

describe("UsparkError", () => {
  it.each(made.map(([error, name, code]) => ({ error, name, code })))(
    "$name with code $code is a UsparkError and an Error",
    ({ error, name, code }) => {
      expect(error).toBeInstanceOf(UsparkError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect((error as UsparkError).code).toBe(code);
      expect(errorCode(error)).toBe(code);
    },
  );

  it("keeps each class's own fields", () => {
    expect(new UsageError("bad", "hint").hint).toBe("hint");
    expect(new RootLockHeld("/r", 7)).toMatchObject({ root: "/r", pid: 7, message: "another uspark (pid 7) is already watching /r" });
    expect(new RewoundError("why")).toBeInstanceOf(ApiError);
  });
});
