// Commits on any replica wake the long polls of every replica: a commit sends a NOTIFY in its
// transaction (delivered when it commits), and each replica LISTENs on one connection of its own,
// whatever the number of waiters. A notification lost while that connection is down only delays
// a waiter: on every (re)connection, and every few seconds while anyone waits, the store reads
// the heads again (see PgStore).

import type { Client, ClientBase } from "pg";
import { requireCjs } from "../../util/cjs.js";

const CHANNEL = "uspark_commits";
const RETRY_MS = 1000;

/** Inside the commit's transaction: tells every replica the project's new head once it commits. */
export async function notifyCommit(client: ClientBase, projectId: string, version: number): Promise<void> {
  await client.query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify({ project: projectId, version })]);
}

export class CommitListener {
  private client?: Client;
  private closed = false;
  private retry?: NodeJS.Timeout;

  /**
   * `onCommit` hears each commit's project and version; `onConnected` is called on every
   * (re)connection, after which notifications flow again (what came before may be lost).
   */
  constructor(
    private readonly url: string,
    private readonly onCommit: (projectId: string, version: number) => void,
    private readonly onConnected: () => void,
  ) {}

  /** Connects now and again after each loss, until closed. */
  async start(): Promise<void> {
    const { Client } = requireCjs("pg") as typeof import("pg");
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    this.client = client;
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    client.on("notification", (message) => this.deliver(message.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.onConnected();
    } catch {
      this.lost(client);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private lost(client: Client): void {
    if (this.client !== client) return; // heard already, or closed
    this.client = undefined;
    client.end().catch(() => {});
    if (!this.closed) this.retry = setTimeout(() => void this.start(), RETRY_MS);
  }

  private deliver(payload: string | undefined): void {
    try {
      const { project, version } = JSON.parse(payload ?? "") as { project?: unknown; version?: unknown };
      if (typeof project === "string" && typeof version === "number") this.onCommit(project, version);
    } catch {
      // Not ours: the channel is shared by every schema of the database.
    }
  }
}
