import { BaseKeeper } from "../../../src/reconcile/base-keeper.js";
import { mergeBase, type Base, type BaseKey } from "../../../src/reconcile/base.js";
import { checkLineage } from "../../../src/reconcile/lineage.js";
import type { Mode } from "../../../src/reconcile/reconcile.js";
import { Reconciler, type RoundRequest } from "../../../src/reconcile/reconciler.js";
import { RemoteView } from "../../../src/reconcile/remote-view.js";
import type { Intent, StateStore } from "../../../src/reconcile/state-store.js";
import { Reporter } from "../../../src/report/reporter.js";
import { restoreIn } from "../../../src/lifecycle/restore.js";
import { ApiError } from "../../../src/transfer/api-error.js";
import { ProjectRemote } from "../../../src/transfer/project-remote.js";
import { RetryingCaller } from "../../../src/transfer/retry.js";
import { plainCopy } from "./plain-data.js";
import type { MemoryServer } from "./memory-server.js";
import type { MemoryTree } from "./memory-tree.js";
import type { Random } from "./random.js";
import type { Scheduler } from "./scheduler.js";
import { simulatedApi, type Acknowledged, type Faults } from "./transport.js";

/**
 * One writer: a tree and a state file that outlive it, and a process (an incarnation) that syncs
 * them, made of the real reconcile (Reconciler, BaseKeeper, RemoteView, ProjectRemote, the retry
 * policy), as `uspark watch` (one-way or --two-way) and `uspark push`/`pull` put it together. A
 * crash kills the process between any two steps; the next one starts from the saved base only.
 */

export interface WorldParts {
  server: MemoryServer;
  scheduler: Scheduler;
  random: Random;
  faults: () => Faults;
  acknowledged: Acknowledged[];
  /** Never aborted (the simulation ends a process by dropping its steps): one a seed, as one costs 25 µs. */
  signal: AbortSignal;
  /** Something the code under test must never do (a failed commit, an error it throws). */
  violation(why: string): void;
  /** In a seed with restores: when a round is a `uspark restore <path> --at N` instead, and of what. */
  restores?: Random;
  /** The versions of the restores that ended (exit 0): their content was written here and is the base. */
  restoredHere: Set<number>;
}

const KEY: BaseKey = { apiUrl: "http://sim.invalid", projectId: "sim" };
/** Warnings that a correct reconcile never gives against a correct server. */
const NEVER = new Set(["commit-failed", "pull-failed", "pull-refused", "batch-failed", "state-write", "sync-error"]);

/** A pull refused because a file and a directory would share a name here: said, and right (a clash stands). */
const CLASH = /a directory is in its place here|is a file here, not a directory/;

/**
 * A tree's state file and intent files: what was made durable survives a crash, with the file
 * system's mtime of the save. Several processes may share them (`storeFor` each): a save merges
 * the process's own paths into what is stored, as the real one does under its lock; each step is
 * one I/O step a crash may fall between.
 */
export class MemoryState {
  saved: Base | undefined;
  savedAt: number | undefined;
  readonly intents = new Map<string, { intent: Intent; owner: string }>();

  constructor(
    private readonly tree: MemoryTree,
    private readonly scheduler: Scheduler,
  ) {}

  /** The state as the process `owner` reads and writes it. */
  storeFor(owner: string): StateStore {
    const { scheduler } = this;
    return {
      load: async () => {
        await scheduler.gate(owner, "load state");
        return this.saved && { ...plainCopy(this.saved), savedMtimeMs: this.savedAt };
      },
      save: async (base, paths) => {
        const snapshot = touchedPart(base, paths);
        await scheduler.gate(owner, "save state");
        this.saved = mergeBase(this.saved, snapshot, paths);
        this.savedAt = this.tree.fsNow();
        return this.savedAt;
      },
      writeIntent: async (intent) => {
        const copy = plainCopy(intent);
        await scheduler.gate(owner, `write intent ${intent.key}`);
        this.intents.set(intent.key, { intent: copy, owner });
      },
      removeIntent: async (key) => {
        await scheduler.gate(owner, `remove intent ${key}`);
        this.intents.delete(key);
      },
      openIntents: async () => {
        await scheduler.gate(owner, "list intents");
        return [...this.intents.values()].filter((i) => scheduler.isDead(i.owner)).map((i) => plainCopy(i.intent));
      },
    };
  }
}

/**
 * What a save merges (mergeBase takes only `paths` of it): those entries copied, not the whole base.
 * A copy of the whole base at every save was the simulation's largest cost of its own.
 */
function touchedPart(base: Base, paths: Iterable<string>): Base {
  const part: Base = { ...base, files: new Map(), conflicts: new Map(), held: new Set(), sent: new Map() };
  for (const path of paths) {
    const file = base.files.get(path);
    if (file) part.files.set(path, { ...file });
    const conflict = base.conflicts.get(path);
    if (conflict) part.conflicts.set(path, { ...conflict });
    if (base.sent?.has(path)) part.sent!.set(path, base.sent.get(path)!);
    if (base.held.has(path)) part.held.add(path);
  }
  return part;
}

interface Process {
  owner: string;
  reconciler: Reconciler;
  view: RemoteView;
  base: BaseKeeper;
  remote: ProjectRemote;
  report: Reporter;
}

export class Writer {
  /** Paths the user touched since the last round: what the file events would name. */
  readonly events = new Set<string>();
  /** The tree's state file and intents: this writer's own, or those of the writer whose tree it shares. */
  readonly state: MemoryState;
  private owner = "";
  private incarnation = 0;
  private process: Promise<Process> | undefined;
  /** A restore is under way (a crash may fall between any two of its steps). */
  restoring = false;
  /** The errors this process said: a restore that exits 1 must have said why. */
  private errorsSaid = 0;
  /** The version the restore under way committed, as it said. */
  private restoredAt: number | undefined;
  private loop: Promise<void> | undefined;
  stopping = false;

  constructor(
    readonly name: string,
    readonly tree: MemoryTree,
    readonly twoWay: boolean,
    private readonly world: WorldParts,
    /** Another process on the tree of `sharing` (pushes now and then beside its watch: one watcher a root): one state file for both. */
    private readonly sharing?: Writer,
  ) {
    this.state = sharing?.state ?? new MemoryState(tree, world.scheduler);
  }

  /** Starts a process (the first, or the one after a crash) and its watch loop. */
  start(): void {
    this.owner = `${this.name}#${++this.incarnation}`;
    this.process = this.boot(this.owner);
    this.loop = this.watch();
  }

  /** Kills the process where it stands: nothing of it runs again; the tree and the saved state stay. */
  crash(): void {
    const owner = this.owner;
    this.world.scheduler.kill(owner);
    this.world.scheduler.log(() => `${owner} crashed${this.restoring ? " (restoring)" : ""}`);
    this.restoring = false;
    this.start();
  }

  /** Ends the watch loop after its current round. */
  stop(): Promise<void> {
    this.stopping = true;
    return this.loop ?? Promise.resolve();
  }

  /** One sync over everything, as a settling writer does: follow the remote (two-way), then a round. */
  async syncAll(): Promise<{ requeue: number }> {
    const p = await this.process!;
    const { signal } = this.world;
    if (this.twoWay) await p.view.refresh(signal);
    const result = await p.reconciler.round({ mode: this.mode, paths: "all" }, signal);
    return { requeue: result.requeue.length };
  }

  /** What this writer leaves unsynced on purpose: open conflicts, their copies, deletes the mass-delete guard holds. */
  async leftOpen(): Promise<{ paths: Set<string>; copies: Set<string>; held: Set<string>; base: ReadonlyMap<string, { sha256: string }> }> {
    const p = await this.process!;
    return {
      paths: new Set(p.base.base.conflicts.keys()),
      copies: p.base.conflictCopies(),
      held: new Set(p.base.base.held),
      base: p.base.base.files,
    };
  }

  /** The remote version the state file last saved. */
  get savedVersion(): number {
    return this.state.saved?.version ?? 0;
  }

  /** What every command does first (src/reconcile/lineage.ts): throws RewoundError unless `accept`; true when rewound. */
  async lineage(accept: boolean): Promise<boolean> {
    const p = await this.process!;
    await p.view.ensure(this.world.signal);
    return checkLineage(p.base.base, p, this.world.signal, accept);
  }

  /** `uspark push --onto-rewound`: this tree's files onto the rewound server; its history taken once all of them are. */
  async ontoRewound(): Promise<void> {
    const p = await this.process!;
    if (!(await this.lineage(true))) return;
    await p.reconciler.round({ mode: "push", paths: "all", onto: true }, this.world.signal);
    if (p.reconciler.ledger.unsettled().some(([, outcome]) => outcome.status === "failed")) return;
    p.base.accept(p.view.version, p.view.chain);
  }

  private get mode(): Mode {
    return this.twoWay ? "two-way" : "push";
  }

  private async boot(owner: string): Promise<Process> {
    const { scheduler, random } = this.world;
    const timers = scheduler.timersFor(owner);
    const report = new HeardReporter((level, event, message) => this.heard(owner, level, event, message), scheduler.tracing);
    const caller = new RetryingCaller({
      report,
      host: "sim",
      policy: { baseMs: 5, capMs: 200, retryAfterCapMs: 1000 },
      timers,
      random: () => random.next(),
    });
    const { server, faults, acknowledged } = this.world;
    const api = simulatedApi({ server, scheduler, random, faults, acknowledged, owner, writer: this.name });
    const remote = new ProjectRemote(api, caller, { concurrency: 2, report });
    const view = new RemoteView(remote, report);
    const base = await BaseKeeper.load(KEY, { store: this.state.storeFor(owner), report, timers, saveEveryMs: random.int(0, 400) });
    view.pairWith(base);
    const tree = this.tree.api((label) => scheduler.gate(owner, label));
    const reconciler = new Reconciler({
      tree,
      remote,
      view,
      base,
      report,
      source: { agent: "sim", sessionId: owner },
      host: this.name,
      maxFileSize: 1 << 20,
      timers,
    });
    return { owner, reconciler, view, base, remote, report };
  }

  private async watch(): Promise<void> {
    const owner = this.owner;
    const { scheduler, random } = this.world;
    let first = true;
    const timers = scheduler.timersFor(owner);
    while (!this.stopping) {
      // The watch's debounce: a round now and then, not back to back.
      await new Promise<void>((resolve) => timers.setTimeout(resolve, first ? 0 : random.int(0, this.sharing ? 1500 : 300)));
      // A restore drawn from the edges' own stream: a seed that draws none runs as before restores were added.
      const action = first
        ? "all"
        : this.world.restores?.chance(0.08)
          ? "restore"
          : random.weighted({ all: 2, events: 4, scan: 2, pull: this.twoWay ? 0 : 1 });
      first = false;
      try {
        await this.act(action, await this.process!);
      } catch (error) {
        const why = error instanceof ApiError ? `${error.code}: ${error.message}` : ((error as Error).stack ?? String(error));
        this.world.violation(`${owner} ${action}: threw ${why}`);
        return;
      }
    }
  }

  private async act(action: "all" | "events" | "scan" | "pull" | "restore", p: Process): Promise<void> {
    const { signal } = this.world;
    if (action === "restore") return this.restore(p);
    this.world.scheduler.log(() => `${p.owner} ${action}`);
    let request: RoundRequest;
    if (action === "all" || action === "pull") {
      if (this.twoWay) await p.view.refresh(signal);
      request = { mode: action === "pull" ? "pull" : this.mode, paths: "all" };
    } else if (action === "scan") {
      request = { mode: this.mode, paths: (await p.reconciler.scan(this.twoWay, signal)).paths };
    } else {
      const evidence = new Set(this.events);
      this.events.clear();
      const paths = new Set(evidence);
      if (this.twoWay) for (const path of await p.view.refresh(signal)) paths.add(path);
      request = { mode: this.mode, paths: [...paths], evidence };
    }
    if (request.paths.length === 0) return;
    const { requeue } = await p.reconciler.round(request, signal);
    for (const path of requeue) this.events.add(path);
  }

  /**
   * `uspark restore <path> --at N` (src/lifecycle/restore.ts, its own code): a path (or its
   * directory) the history named, as at a version this process knows. Exit 1 must be said.
   */
  private async restore(p: Process): Promise<void> {
    const { server, signal } = this.world;
    const pick = this.world.restores!;
    await p.view.ensure(signal);
    if (p.view.version === 0) return;
    const at = pick.int(1, p.view.version);
    const file = pick.pick(server.log.slice(0, p.view.version).flatMap((c) => c.changes.map((ch) => ch.path)));
    const path = file.includes("/") && pick.chance(0.2) ? file.slice(0, file.lastIndexOf("/")) : file;
    this.world.scheduler.log(() => `${p.owner} restore ${path} --at ${at}`);
    this.restoring = true;
    const said = this.errorsSaid;
    this.restoredAt = undefined;
    const code = await restoreIn({ view: p.view, remote: p.remote, reconciler: p.reconciler, signal }, [path], { at, report: p.report });
    this.restoring = false;
    this.world.scheduler.log(() => `${p.owner} restore ${path} --at ${at}: exit ${code}`);
    if (code === 0 && this.restoredAt !== undefined) this.world.restoredHere.add(this.restoredAt);
    if (code !== 0 && this.errorsSaid === said)
      this.world.violation(`${p.owner} restore ${path} --at ${at}: exit ${code}, and nothing said why`);
  }

  /** What the process says: a warning it must never give is a violation; everything goes in the trace. */
  private heard(owner: string, level: string, event: string, message: string): void {
    if (level === "error" && owner === this.owner) this.errorsSaid++;
    if (event === "restore" && level === "info" && owner === this.owner) this.restoredAt = Number(/in version (\d+)$/.exec(message)?.[1]);
    this.world.scheduler.log(() => `${owner} said ${level} ${event}: ${message}`);
    if (NEVER.has(event) && !(event === "pull-refused" && CLASH.test(message)))
      this.world.violation(`${owner} warned ${event}: ${message}`);
  }
}

/** A reporter that hands each event on as it is, unformatted (thousands of runs print nothing). */
class HeardReporter extends Reporter {
  constructor(
    private readonly hear: (level: string, event: string, message: string) => void,
    private readonly debugToo: boolean,
  ) {
    // No color to decide: nothing is printed (deciding reads the environment, each process again).
    super({ verbosity: "quiet", stream: { write: () => true }, color: false });
  }

  override error(event: string, message: string): void {
    this.hear("error", event, message);
  }

  override warn(event: string, message: string): void {
    this.hear("warn", event, message);
  }

  override info(event: string, message: string): void {
    this.hear("info", event, message);
  }

  override debug(event: string, message: string): void {
    if (this.debugToo) this.hear("debug", event, message);
  }
}
