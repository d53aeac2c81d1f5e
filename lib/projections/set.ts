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

import { memoryLevel } from '../dependencies.js';
import { ClosedError, IndexDamagedError, ResumeMismatchError } from '../errors.js';
import type { EventLog, LogBackend, ResumePoint } from '../log.js';
import type { Db } from './database.js';
import { checkDefinitions, type ProjectionDefinition, type ProjectionProgress } from './definition.js';
import { submit } from './feeder.js';
import { ModelFolder } from './folder.js';
import { Generation, refusalOf } from './generation.js';
import type { Checkpoint } from './layout.js';
import { Builds } from './set-builds.js';
import { ReadThrough } from './set-open.js';
import type { ProjectionSetOptions } from './set-options.js';
import { answeredBy, byDatabase, planOpen, queriesOf, type Slot, usable } from './set-plan.js';
import { DatabaseStore, FolderStore, type Store } from './store.js';

export type { ProjectionSetOptions } from './set-options.js';

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
  private readonly opening: ReadThrough<R>;
  private closed = false;
  private statusAt = 0;
  private readonly notice: (message: string) => void;

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
    this.opening = new ReadThrough<R>({
      store,
      options,
      logName,
      slots: this.slots,
      builds: this.builds,
      backgroundFrom: options.backgroundFrom ?? BACKGROUND_FROM,
      name: () => this.name,
      took: (checkpoint) => {
        this.applied = checkpoint;
      },
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
        return await this.opening.readThrough(
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
      await this.opening.close();
    } finally {
      await this.store.close();
    }
  }
}

/** Opens where the rows are. */
async function openStore(index: string | Db | null): Promise<Store> {
  if (index === null)
    return DatabaseStore.open(
      new (memoryLevel().MemoryLevel)<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }),
      'memory',
      true,
    );
  if (typeof index !== 'string') return DatabaseStore.open(index, `index:${index.constructor.name}`, false);
  const { model, discarded } = await ModelFolder.open(index);
  return new FolderStore(model, discarded);
}
