/**
 * The projections of one log, kept in a read model: opened with the log, caught up from their
 * checkpoints as the log is read through, changed by every append once it is durable, and built
 * again from the log's start when their rows cannot be used (a new read model, another version,
 * damage, a log that no longer holds their checkpoint).
 *
 * - **At open**, the log is read from the earliest checkpoint of the rows that can be used (from
 *   its start when something must be built or copied into memory), each record applied to the
 *   rows whose checkpoint is before it. The checkpoints of those rows are checked against the
 *   log (the one resumed at by the open itself, any other by a read-only open), so that rows are
 *   never ahead of the log, nor of another log. A record a projection refuses is damage at its
 *   line, and the log is left as it was.
 * - **A build** runs during the open's read-through when the log is short (`backgroundFrom`) or
 *   no worker thread can run it, and the open returns with the rows built. Otherwise it runs in a
 *   worker thread after the open (`background.ts`), into a database of its own, up to where the
 *   log was; the open does not wait for it. Meanwhile rows of an older version answer the queries
 *   they still answer right (`answersSince`), kept up to date by every append, and the others are
 *   answered from a copy in memory (the caller's own, or one the engine keeps), fed from the log's
 *   start during the open. When the build is done, its rows catch up with what was appended
 *   since and take over in one step (the registry, rewritten once, in the same turn as no append),
 *   and what answered in their place is released.
 * - **A crash at any moment** leaves the registry before a step or after it; rows being built are
 *   marked until their last batch, and the next open throws them away and builds them again.
 *
 * Longer than most files, and earned: one class, the life of a log's projections (open, append,
 * build, takeover, release, close), and this doc of its promises.
 *
 * @module
 */
import { MemoryLevel } from 'memory-level';
import { ClosedError, DamagedError, IndexDamagedError, ResumeMismatchError } from '../errors.js';
import type { EventLog, LogBackend, Position, ResumePoint } from '../log.js';
import type { Db } from './database.js';
import { checkDefinitions, type Loadable, type ProjectionDefinition, type ProjectionProgress } from './definition.js';
import { Feeder, submit, type Target } from './feeder.js';
import { ModelFolder } from './folder.js';
import { Generation, type GenerationEntry, refusalOf } from './generation.js';
import { type Checkpoint, earliestCheckpoint } from './layout.js';
import { newDatabase, withGenerations, withRole } from './registry.js';
import { Builds } from './set-builds.js';
import {
  answeredBy,
  byDatabase,
  changed,
  distinct,
  type Plan,
  planOpen,
  pointKey,
  queriesOf,
  registryWith,
  type Slot,
  usable,
} from './set-plan.js';
import { DatabaseStore, FolderStore, type Store } from './store.js';

/** How to open a log's projections. */
export interface ProjectionSetOptions<R> {
  /**
   * Where the rows are: a folder of their own (created if missing), a caller's abstract-level
   * database of bytes (left open at close), or `null` for a database in memory (built at every
   * open).
   */
  readonly index: string | Db | null;
  readonly projections: readonly ProjectionDefinition<R>[];
  /** The log is opened read-only; the rows are still brought up to date (they are the read model's own). */
  readonly readOnly?: boolean;
  /** Told, once, of a build: of a new read model, or why rows are built again. */
  readonly onNotice?: (message: string) => void;
  /** Every build runs during the open, which returns once every projection is ready. */
  readonly waitForIndex?: boolean;
  /** How a worker thread opens this log, read-only, to build projections there (without it, builds run in the open). */
  readonly worker?: Loadable;
  /** The fewest records a build runs in the background for; shorter logs are built in the open. Default 50,000. */
  readonly backgroundFrom?: number;
  /** Projections whose queries the caller answers itself while no rows do (the engine keeps no copy of them). */
  readonly answeredElsewhere?: readonly string[];
  /**
   * Asked once, when the read model is looked at, with the queries of `answeredElsewhere`
   * projections that no rows will answer while they are built: gives what to call with every
   * record from the log's start (the caller's copy in memory), or `null`.
   */
  readonly fallback?: (
    unanswered: ReadonlyMap<string, readonly string[]>,
  ) => ((record: R, position: Position) => void) | null;
  /**
   * Called with every record of the log from its start, before the projections: the caller's own
   * state in memory, kept whatever the rows are (it may refuse a record, which is then damage).
   */
  readonly replay?: (record: R, position: Position) => void;
  /** Told whenever what answers a projection changes (a build took over). */
  readonly onChange?: () => void;
}

/** The fewest records a build runs in the background for, by default. */
export const BACKGROUND_FROM = 50_000;
/** How often the status file is rewritten while a build runs. */
const STATUS_MS = 1000;

/** The projections of a log, open. */
export class ProjectionSet<R> {
  private readonly slots = new Map<string, Slot<R>>();
  /** Appends and takeovers, one at a time. */
  private turn: Promise<unknown> = Promise.resolve();
  /** The checkpoint after the last batch taken in. */
  private applied: Checkpoint | null = null;
  private readonly builds: Builds<R>;
  private closed = false;
  private statusAt = 0;
  private readonly notice: (message: string) => void;
  /** A store in memory for the engine's copies, made when one is needed. */
  private copies: DatabaseStore | null = null;

  private constructor(
    private readonly store: Store,
    private readonly options: ProjectionSetOptions<R>,
    private readonly logName: string,
  ) {
    this.notice = options.onNotice ?? (() => undefined);
    this.builds = new Builds<R>({
      store,
      worker: options.worker,
      changed: () => options.onChange?.(),
      logName,
      slots: this.slots,
      name: () => this.name,
      closed: () => this.closed,
      applied: () => this.applied,
      inTurn: (step) => this.inTurn(step),
      writeStatus: (now) => this.writeStatus(now),
      notice: (message) => this.notice(message),
    });
    for (const definition of options.projections) {
      let settle = { resolve: (): void => undefined, reject: (_: Error): void => undefined };
      const ready = new Promise<void>((resolve, reject) => {
        settle = { resolve, reject };
      });
      ready.catch(() => undefined); // told to whoever waits
      this.slots.set(definition.name, {
        definition,
        serving: null,
        previous: null,
        copy: null,
        build: null,
        why: null,
        ready,
        settle,
      });
    }
  }

  /**
   * Opens the projections of the log `backend` opens, and the log (read through as the
   * projections need it). Gives both; closing the set does not close the log.
   * @throws `DamagedError` when a record does not read or a projection refuses it (the log is unchanged)
   * @throws `LockedError` when another process (or open) has the read model
   * @throws `ForeignFolderError` when the folder holds anything but a read model
   */
  static async open<R>(
    backend: LogBackend<R>,
    options: ProjectionSetOptions<R>,
  ): Promise<{ readonly set: ProjectionSet<R>; readonly log: EventLog<R> }> {
    checkDefinitions(options.projections);
    const store = await openStore(options.index);
    const set = new ProjectionSet(store, options, backend.name);
    try {
      const log = await set.start(backend);
      return { set, log };
    } catch (e) {
      await set.close().catch(() => undefined);
      throw e;
    }
  }

  /** The read model's folder, or its database's name. */
  get name(): string {
    return this.store.name;
  }

  // -- the open -------------------------------------------------------------------------------

  private async start(backend: LogBackend<R>): Promise<EventLog<R>> {
    const generations = await this.loadGenerations();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.readThrough(
          backend,
          planOpen(this.slots.values(), generations, {
            discarded: this.store.discarded,
            inWorker: (definition) =>
              this.options.waitForIndex !== true &&
              this.options.worker !== undefined &&
              definition.worker !== undefined &&
              this.store.folder !== null,
            backgroundFrom: this.backgroundFrom,
          }),
        );
      } catch (e) {
        // Rows that turned out not to hold (the log does not hold their checkpoint, a row read
        // back damaged) are not used, and the open is tried again without them, once.
        if (attempt > 0 || !(await this.distrust(e, generations))) throw e;
      }
    }
  }

  /** Every generation the registry names of a projection opened with, loaded. */
  private async loadGenerations(): Promise<Generation<R>[]> {
    const loaded: Generation<R>[] = [];
    for (const entry of this.store.registry.generations) {
      const definition = this.slots.get(entry.projection)?.definition;
      if (definition === undefined) continue;
      const { database, discarded } = await this.store.database(entry.db);
      const generation = new Generation(entry, definition, database);
      if (discarded !== null) generation.distrust = `${discarded}; it was discarded`;
      else generation.load();
      if (usable(generation) && definition.verify !== undefined) {
        const position = (generation.checkpoint as Checkpoint).resume.position;
        generation.distrust = await definition.verify(generation.reader, position);
      }
      loaded.push(generation);
    }
    return loaded;
  }

  private get backgroundFrom(): number {
    return this.options.backgroundFrom ?? BACKGROUND_FROM;
  }

  /**
   * Reads the log through for the plans: rows caught up from their checkpoints, built in the open
   * or tried there, copies fed; then commits what it did and starts the builds left.
   */
  private async readThrough(backend: LogBackend<R>, plans: readonly Plan<R>[]): Promise<EventLog<R>> {
    const caughtUp = plans.flatMap((p) => [p.current, p.previous]).filter((g): g is Generation<R> => g !== null);
    const targets: Target<R>[] = caughtUp.map((generation) => ({
      generation,
      from: (generation.checkpoint as Checkpoint).resume.position,
    }));
    // new rows for the builds in the open (registered first: they are written as the log is read)
    // and for those tried (registered only if kept)
    const inOpen = plans.filter((p) => p.mode === 'open' || p.mode === 'tried');
    const made = await this.newGenerations(inOpen, caughtUp);
    const built = made.filter((_, n) => inOpen[n]?.mode === 'open');
    const tried = made.filter((_, n) => inOpen[n]?.mode === 'tried');
    for (const generation of built) targets.push({ generation, from: 0 });
    for (const generation of tried) targets.push({ generation, from: 0, holdUpTo: this.backgroundFrom });
    // copies of what no rows answer while they are built in the background
    const unanswered = new Map<string, string[]>();
    const elsewhere = new Set(this.options.answeredElsewhere ?? []);
    for (const plan of plans) {
      plan.slot.copy = null;
      if (plan.mode === null || plan.mode === 'open') continue;
      const missing = queriesOf(plan.slot.definition).filter(
        (q) => plan.previous === null || !answeredBy(plan.slot.definition, plan.previous.entry.version).includes(q),
      );
      if (missing.length === 0) continue;
      if (elsewhere.has(plan.slot.definition.name)) unanswered.set(plan.slot.definition.name, missing);
      else {
        plan.slot.copy = await this.copyOf(plan.slot.definition);
        targets.push({ generation: plan.slot.copy, from: 0 });
      }
    }
    const fallback = unanswered.size > 0 ? (this.options.fallback?.(unanswered) ?? null) : null;
    const replay = this.options.replay;
    const hook =
      replay === undefined
        ? fallback
        : fallback === null
          ? replay
          : (record: R, position: Position): void => {
              replay(record, position);
              fallback(record, position);
            };
    const fromStart = made.length > 0 || hook !== null || plans.some((p) => p.slot.copy !== null);
    const checkpoints = caughtUp.map((g) => g.checkpoint as Checkpoint);
    const resume = fromStart ? undefined : earliestCheckpoint(checkpoints);
    for (const checkpoint of distinct(checkpoints)) {
      if (resume !== undefined && pointKey(checkpoint) === pointKey(resume)) continue;
      // another point the rows are at: the log must hold it too (read-only, nothing is changed)
      const checked = await backend.open({ readOnly: true, resume: checkpoint.resume });
      await checked.close();
    }
    const feeder = new Feeder(targets, this.logName);
    let log: EventLog<R>;
    try {
      log = await backend.open({
        readOnly: this.options.readOnly ?? false,
        ...(resume === undefined ? {} : { resume: resume.resume }),
        replay: (record, position) => {
          hook?.(record, position);
          return feeder.push(record, position);
        },
      });
    } catch (e) {
      await feeder.settle();
      // A record the log could not read: one refused before it, not applied yet, comes first.
      if (e instanceof DamagedError) feeder.flushChunk();
      throw e;
    }
    try {
      const checkpoint: Checkpoint = { resume: await log.resumePoint(), log: this.logName };
      const kept = tried.filter((g) => !feeder.dropped.includes(g));
      // rows that took in nothing and are at the point already need no batch (a warm open writes nothing)
      await feeder.finish(checkpoint, made.length > 0, (g) => changed(g, checkpoint));
      this.applied = checkpoint;
      await this.commit(plans, [...built, ...kept], checkpoint, feeder.count);
      return log;
    } catch (e) {
      await log.close().catch(() => undefined);
      throw e;
    }
  }

  /**
   * After the read-through: the registry says which rows serve now (those built in the open,
   * those tried and kept, those built before a crash), the slots answer from them, the builds
   * left start in the background, and what is not used any more is released.
   */
  private async commit(
    plans: readonly Plan<R>[],
    built: readonly Generation<R>[],
    checkpoint: Checkpoint,
    fed: number,
  ): Promise<void> {
    const serving = [...built, ...plans.flatMap((p) => (p.current === null ? [] : [p.current]))];
    const replaced = plans.flatMap((p) =>
      p.previous !== null && built.some((g) => g.entry.projection === p.slot.definition.name) ? [p.previous] : [],
    );
    const released = [...plans.flatMap((p) => p.unused), ...replaced];
    let registry = registryWith(this.store.registry, serving, 'serving');
    registry = withRole(
      registry,
      released.map((g) => g.entry.id),
      'retired',
    );
    if (JSON.stringify(registry) !== JSON.stringify(this.store.registry)) await this.store.writeRegistry(registry);
    for (const plan of plans) {
      const slot = plan.slot;
      slot.serving = serving.find((g) => g.entry.projection === slot.definition.name) ?? null;
      slot.previous = slot.serving === null ? plan.previous : null;
      if (slot.serving !== null) slot.copy = null;
      slot.why = slot.serving === null ? plan.why : null;
    }
    const left = plans.filter((p) => p.slot.serving === null);
    this.noticeBuilds(plans, left, checkpoint.resume.position, fed);
    if (left.length > 0)
      await this.builds.start(
        left.map((p) => p.slot),
        checkpoint.resume,
      );
    for (const slot of this.slots.values()) if (slot.serving !== null) slot.settle.resolve();
    this.builds.release(released);
    this.writeStatus(true);
  }

  /**
   * Rows for the plans' builds in the open, in a database that holds rows already when there is
   * one. Those built in the open are registered (building) before anything of them is written;
   * those tried, only if they are kept (their ids are taken all the same).
   */
  private async newGenerations(
    plans: readonly Plan<R>[],
    caughtUp: readonly Generation<R>[],
  ): Promise<Generation<R>[]> {
    if (plans.length === 0) return [];
    let registry = this.store.registry;
    let db = caughtUp.find((g) => g.db.damaged === null)?.entry.db;
    if (db === undefined) {
      if (this.store.folder === null) db = null;
      else ({ registry, name: db } = newDatabase(registry));
    }
    const { registry: next, entries } = withGenerations(
      registry,
      plans.map((p) => ({
        projection: p.slot.definition.name,
        version: p.slot.definition.version,
        db,
        role: 'building',
      })),
    );
    const inOpen = new Set(plans.flatMap((p, n) => (p.mode === 'open' ? [entries[n]?.id] : [])));
    await this.store.writeRegistry({
      next: next.next,
      generations: next.generations.filter((g) => !entries.some((e) => e.id === g.id) || inOpen.has(g.id)),
    });
    const { database } = await this.store.database(db);
    return entries.map((entry, n) => {
      const generation = new Generation(entry, (plans[n] as Plan<R>).slot.definition, database);
      generation.startEmpty();
      return generation;
    });
  }

  /** The engine's copy in memory of a projection, fed from the log's start. */
  private async copyOf(definition: ProjectionDefinition<R>): Promise<Generation<R>> {
    this.copies ??= await DatabaseStore.open(
      new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }),
      'memory',
      true,
    );
    const { database } = await this.copies.database();
    const entry: GenerationEntry = {
      id: `${definition.name}.copy`,
      projection: definition.name,
      version: definition.version,
      db: null,
      role: 'serving',
    };
    const copy = new Generation(entry, definition, database);
    copy.startEmpty();
    return copy;
  }

  /**
   * An open that failed because rows did not hold: marks them not to be used. Gives whether the
   * failure was of that kind (and the open is to be tried again).
   */
  private async distrust(e: unknown, generations: readonly Generation<R>[]): Promise<boolean> {
    if (e instanceof ResumeMismatchError) {
      const at = generations.filter((g) => g.checkpoint?.resume.position === e.position);
      for (const generation of at) {
        // a read model given another ledger's log by mistake: say so before how the logs differ
        const of = generation.checkpoint?.log;
        generation.distrust =
          of === undefined || of === this.logName
            ? e.message
            : `it was built of ${of}, not ${this.logName}; ${e.message}`;
      }
      return at.length > 0;
    }
    if (e instanceof IndexDamagedError) {
      const damaged = generations.filter((g) => g.db.damaged !== null);
      for (const generation of damaged) generation.distrust = `${e.why}; it was discarded`;
      for (const name of new Set(damaged.map((g) => g.entry.db))) {
        // its marker says to discard it: opened again, it is thrown away and made anew
        if (name !== null) await this.store.removeDatabase(name);
      }
      return damaged.length > 0;
    }
    return false;
  }

  /** Says once what the open builds, and why. */
  private noticeBuilds(plans: readonly Plan<R>[], left: readonly Plan<R>[], records: Position, fed: number): void {
    const builds = plans.filter((p) => p.mode !== null);
    if (builds.length === 0) return;
    const where = left.length > 0 ? ' (in the background)' : '';
    const everything = builds.length === plans.length;
    const whys = new Set(builds.map((p) => p.why));
    if (everything && whys.size === 1) {
      const [why] = whys;
      if (why !== null && why !== undefined)
        this.notice(`${this.name}: rebuilding the index from ${this.logName}${where}: ${why}`);
      else if (records > 0 && (fed > 0 || left.length > 0))
        this.notice(`${this.name}: built the index of ${this.logName} (${records} records)${where}`);
      return;
    }
    for (const why of whys) {
      const names = builds.filter((p) => p.why === why).map((p) => p.slot.definition.name);
      const what = `${names.length === 1 ? 'the projection' : 'the projections'} ${names.join(', ')}`;
      this.notice(
        `${this.name}: ${why === null ? 'building' : 'rebuilding'} ${what} from ${this.logName}${where}${why === null ? '' : `: ${why}`}`,
      );
    }
  }

  // -- appends --------------------------------------------------------------------------------

  /**
   * Takes in records the log has made durable, in log order (`point` gives the log's point after
   * them): every set of rows that is kept up to date changes, in one batch per database with its
   * checkpoint, and the builds running keep them for their catch-up. `records` is not kept (a
   * build keeps a copy): the caller may change the array after.
   * @throws the refusal of a projection's `apply` (the rows are left as they were)
   */
  apply(records: readonly R[], point: () => Promise<ResumePoint>): Promise<void> {
    return this.inTurn(async () => {
      if (this.closed) throw new ClosedError(this.name);
      const resume = await point();
      const first = resume.position - records.length;
      const checkpoint: Checkpoint = { resume, log: this.logName };
      const kept = this.kept();
      try {
        for (const generation of kept) generation.apply(records, first);
      } catch (e) {
        for (const generation of kept) generation.dropStaged();
        throw refusalOf(e)?.refusal ?? e;
      }
      // a copy: the caller's array may change once this returns, and a build applies these later
      if (this.builds.running.size > 0) {
        const copy = records.slice();
        for (const build of this.builds.running) build.appended.push({ first, records: copy });
      }
      this.applied = checkpoint;
      await Promise.all(
        [...byDatabase(kept)].map(([database, generations]) => submit(database, generations, checkpoint, false, false)),
      );
    });
  }

  /** The rows every append changes: those that serve, those of an older version still answering, the copies. */
  private kept(): Generation<R>[] {
    const kept: Generation<R>[] = [];
    for (const slot of this.slots.values()) {
      for (const generation of [slot.serving, slot.previous, slot.copy]) if (generation !== null) kept.push(generation);
    }
    return kept;
  }

  private inTurn<T>(step: () => Promise<T>): Promise<T> {
    const run = this.turn.then(step, step);
    this.turn = run.catch(() => undefined);
    return run;
  }

  // -- builds in the background ---------------------------------------------------------------

  // -- queries and progress -------------------------------------------------------------------

  /**
   * The queries of `definition` over rows that answer `query` right now: its rows, an older
   * version's that still answer it, or the engine's copy in memory; `null` when none does (the
   * caller answers it from its own copy).
   */
  answering<Q extends object>(definition: ProjectionDefinition<R, Q>, query: keyof Q & string): Q | null {
    const slot = this.slots.get(definition.name);
    if (slot === undefined) throw new TypeError(`the ledger was not opened with the projection ${definition.name}`);
    const generation =
      slot.serving ??
      (slot.previous !== null && answeredBy(slot.definition, slot.previous.entry.version).includes(query)
        ? slot.previous
        : slot.copy);
    return generation === null ? null : (generation.queries as Q);
  }

  /**
   * The queries of `definition`, each answered by whatever answers it when it is called (see
   * {@link answering}), so that a caller holds one object across a takeover.
   */
  queries<Q extends object>(definition: ProjectionDefinition<R, Q>): Q {
    const routed: { [name: string]: (...args: unknown[]) => unknown } = {};
    for (const name of queriesOf(definition)) {
      routed[name] = (...args: unknown[]): unknown => {
        const answering = this.answering(definition, name as keyof Q & string);
        if (answering === null)
          throw new TypeError(`the projection ${definition.name} has no rows or copy that answer ${name} yet`);
        return (answering as { [name: string]: (...args: unknown[]) => unknown })[name]?.(...args);
      };
    }
    return routed as unknown as Q;
  }

  /** Where each projection stands. */
  progress(): ProjectionProgress[] {
    return [...this.slots.values()].map((slot) => ({
      name: slot.definition.name,
      version: slot.definition.version,
      state: slot.serving !== null ? 'ready' : 'building',
      answering: slot.serving !== null ? 'rows' : slot.previous !== null ? 'previous version' : 'memory',
      done: slot.build?.done ?? 0,
      total: slot.build?.total ?? 0,
      rate: slot.build?.rate ?? 0,
      why: slot.why,
    }));
  }

  /**
   * Resolves once the projection `name` (every projection, without a name) is ready: answered by
   * rows of its version.
   * @throws the build's failure, `ClosedError` when the set closes first, or `signal`'s reason
   */
  async whenReady(name?: string, signal?: AbortSignal): Promise<void> {
    const slots = name === undefined ? [...this.slots.values()] : [this.slots.get(name)];
    const waits = slots.map((slot) => {
      if (slot === undefined) throw new TypeError(`the ledger was not opened with the projection ${String(name)}`);
      return slot.ready;
    });
    if (signal === undefined) {
      await Promise.all(waits);
      return;
    }
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const aborted = (): void => reject(signal.reason);
      signal.addEventListener('abort', aborted, { once: true });
      Promise.all(waits)
        .then(() => resolve(), reject)
        .finally(() => signal.removeEventListener('abort', aborted));
    });
  }

  /** Rewrites the status file: at once when `now`, else at most once a second. */
  private writeStatus(now: boolean): void {
    const at = performance.now();
    if (!now && at - this.statusAt < STATUS_MS) return;
    this.statusAt = at;
    this.store.writeStatus({
      pid: process.pid,
      written: new Date().toISOString(),
      log: this.logName,
      open: !this.closed,
      projections: this.progress(),
    });
  }

  /** Stops the builds running (the next open starts them again), waits for the appends taken, and closes the read model. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.turn;
    await this.builds.stop();
    for (const slot of this.slots.values()) slot.settle.reject(new ClosedError(this.name));
    this.writeStatus(true);
    try {
      await this.copies?.close();
    } finally {
      await this.store.close();
    }
  }
}

/** Opens where the rows are. */
async function openStore(index: string | Db | null): Promise<Store> {
  if (index === null)
    return DatabaseStore.open(
      new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }),
      'memory',
      true,
    );
  if (typeof index !== 'string') return DatabaseStore.open(index, `index:${index.constructor.name}`, false);
  const { model, discarded } = await ModelFolder.open(index);
  return new FolderStore(model, discarded);
}
