import { readFileSync } from "node:fs";
import type { Reporter } from "../report/reporter.js";
import type { EventAt } from "../report/events.js";
import { describeError, errorCode, isGone, type DirNode } from "./tree.js";

/** The watcher's warnings: the first problem of a kind is a warning, the same kind again a debug line. */
export class Trouble {
  private readonly warned = new Set<string>();

  constructor(
    private readonly report: Reporter,
    private readonly interval: number,
  ) {}

  /** A directory could not be watched; true when it should be polled instead. */
  watchFailed(node: DirNode, error: unknown): boolean {
    const code = errorCode(error);
    if (isGone(error)) return false; // removed meanwhile: the parent's events say so
    if (code === "EACCES" || code === "EPERM") {
      this.unreadable(node, error);
      return false;
    }
    const where = whereOf(node);
    const fields = { path: node.rel, code };
    if (code === "ENOSPC") {
      this.once(
        "limit",
        "fswatch-limit",
        `the inotify watch limit is reached (fs.inotify.max_user_watches = ${readProc("fs/inotify/max_user_watches")}): ${where} and the directories beyond the limit are polled every ${this.interval} ms instead. Raise the limit (sudo sysctl fs.inotify.max_user_watches=524288) or run with --poll`,
        fields,
      );
    } else if (code === "EMFILE") {
      this.once(
        "limit",
        "fswatch-limit",
        `too many inotify instances (fs.inotify.max_user_instances = ${readProc("fs/inotify/max_user_instances")}): ${where} and the directories after it are polled every ${this.interval} ms instead. Raise the limit (sudo sysctl fs.inotify.max_user_instances=1024) or run with --poll`,
        fields,
      );
    } else {
      this.once(
        "watch",
        "fswatch-limit",
        `cannot watch ${where} (${describeError(error)}): it is polled every ${this.interval} ms instead; --poll polls everything`,
        fields,
      );
    }
    return true;
  }

  unreadable(node: DirNode, error: unknown): void {
    if (isGone(error)) return;
    this.once(
      "unreadable",
      "fswatch-unreadable",
      `cannot read ${whereOf(node)} (${describeError(error)}): changes under it are not seen. Fix its permissions, or leave it out with --ignore`,
      { path: node.rel, code: errorCode(error) },
    );
  }

  /** Whether anything went wrong since the start (then a change may have gone unseen). */
  get any(): boolean {
    return this.warned.size > 0;
  }

  /** Warns of `kind` once; said again at debug (an event listed at both). */
  once(kind: string, event: EventAt<"warn"> & EventAt<"debug">, message: string, fields?: Record<string, unknown>): void {
    if (this.warned.has(kind)) return this.report.debug(event, message, fields);
    this.warned.add(kind);
    this.report.warn(event, message, fields);
  }
}

function whereOf(node: DirNode): string {
  return node.rel === "" ? "the project root" : `${node.rel}/`;
}

export function readProc(name: string): string {
  try {
    return readFileSync(`/proc/sys/${name}`, "utf8").trim();
  } catch {
    return "unknown";
  }
}
