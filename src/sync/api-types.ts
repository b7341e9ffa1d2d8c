/** What the project API (design.md §3) lists and commits, as the client sends and reads it. */

export interface RemoteFile {
  path: string;
  sha256: string;
  size: number;
}

export interface RemoteTree {
  version: number;
  files: RemoteFile[];
}

export type Change = { op: "put"; path: string; sha256: string; size: number } | { op: "delete"; path: string };

export interface CommitSource {
  agent: string;
  sessionId?: string;
}
