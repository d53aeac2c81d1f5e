/**
 * A read model's open, once it knows what to do with each projection (`set-plan.ts`): the log
 * read through once, feeding the rows caught up from their checkpoints, the rows built in the
 * open or tried there, and the engine's copies in memory of what nothing else answers while it
 * is built; then the commit: which rows serve, the builds left to the background, the rows
 * released. The set (`set.ts`) hands over what it owns through an {@link OpenHost}.
 *
 * @module
 */

import { memoryLevel } from '../dependencies.js';
import { DamagedError } from '../errors.js';
import type { EventLog, LogBackend, Position } from '../log.js';
import type { ProjectionDefinition } from './definition.js';
import { Feeder, type Target } from './feeder.js';
import { Generation, type GenerationEntry } from './generation.js';
import { type Checkpoint, earliestCheckpoint } from './layout.js';
import { newDatabase, withGenerations, withRole } from './registry.js';
import type { Builds } from './set-builds.js';
import type { ProjectionSetOptions } from './set-options.js';
import { answeredBy, changed, distinct, type Plan, pointKey, queriesOf, registryWith, type Slot } from './set-plan.js';
import { DatabaseStore, type Store } from './store.js';

/** What the open uses of its set. */
export interface OpenHost<R> {
  readonly store: Store;
  readonly options: ProjectionSetOptions<R>;
  readonly logName: string;
  readonly slots: ReadonlyMap<string, Slot<R>>;
  readonly builds: Builds<R>;
  readonly backgroundFrom: number;
  /** The set's name, for notices. */
  name(): string;
  /** Tells the set the checkpoint it has taken in. */
  took(checkpoint: Checkpoint): void;
  writeStatus(now: boolean): void;
  notice(message: string): void;
}

/** The read-through of an open and its commit; the engine's copies in memory, kept until {@link ReadThrough.close}. */
export class ReadThrough<R> {
  /** A store in memory for the engine's copies, made when one is needed. */
  private copies: DatabaseStore | null = null;

  constructor(private readonly host: OpenHost<R>) {}

  /** Closes the store of the copies, if one was made. */
  async close(): Promise<void> {
    await this.copies?.close();
  }

  /**
   * Reads the log through for the plans: rows caught up from their checkpoints, built in the open
   * or tried there, copies fed; then commits what it did and starts the builds left.
   */
  async readThrough(backend: LogBackend<R>, plans: readonly Plan<R>[]): Promise<EventLog<R>> {
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
    for (const generation of tried) targets.push({ generation, from: 0, holdUpTo: this.host.backgroundFrom });
    // copies of what no rows answer while they are built in the background
    const unanswered = new Map<string, string[]>();
    const elsewhere = new Set(this.host.options.answeredElsewhere ?? []);
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
    const fallback = unanswered.size > 0 ? (this.host.options.fallback?.(unanswered) ?? null) : null;
    const replay = this.host.options.replay;
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
    const feeder = new Feeder(targets, this.host.logName);
    let log: EventLog<R>;
    try {
      log = await backend.open({
        readOnly: this.host.options.readOnly ?? false,
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
      const checkpoint: Checkpoint = { resume: await log.resumePoint(), log: this.host.logName };
      const kept = tried.filter((g) => !feeder.dropped.includes(g));
      // rows that took in nothing and are at the point already need no batch (a warm open writes nothing)
      await feeder.finish(checkpoint, made.length > 0, (g) => changed(g, checkpoint));
      this.host.took(checkpoint);
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
    let registry = registryWith(this.host.store.registry, serving, 'serving');
    registry = withRole(
      registry,
      released.map((g) => g.entry.id),
      'retired',
    );
    if (JSON.stringify(registry) !== JSON.stringify(this.host.store.registry))
      await this.host.store.writeRegistry(registry);
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
      await this.host.builds.start(
        left.map((p) => p.slot),
        checkpoint.resume,
      );
    for (const slot of this.host.slots.values()) if (slot.serving !== null) slot.settle.resolve();
    this.host.builds.release(released);
    this.host.writeStatus(true);
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
    let registry = this.host.store.registry;
    let db = caughtUp.find((g) => g.db.damaged === null)?.entry.db;
    if (db === undefined) {
      if (this.host.store.folder === null) db = null;
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
    await this.host.store.writeRegistry({
      next: next.next,
      generations: next.generations.filter((g) => !entries.some((e) => e.id === g.id) || inOpen.has(g.id)),
    });
    const { database } = await this.host.store.database(db);
    return entries.map((entry, n) => {
      const generation = new Generation(entry, (plans[n] as Plan<R>).slot.definition, database);
      generation.startEmpty();
      return generation;
    });
  }

  /** The engine's copy in memory of a projection, fed from the log's start. */
  private async copyOf(definition: ProjectionDefinition<R>): Promise<Generation<R>> {
    this.copies ??= await DatabaseStore.open(
      new (memoryLevel().MemoryLevel)<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' }),
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
        this.host.notice(`${this.host.name()}: rebuilding the index from ${this.host.logName}${where}: ${why}`);
      else if (records > 0 && (fed > 0 || left.length > 0))
        this.host.notice(`${this.host.name()}: built the index of ${this.host.logName} (${records} records)${where}`);
      return;
    }
    for (const why of whys) {
      const names = builds.filter((p) => p.why === why).map((p) => p.slot.definition.name);
      const what = `${names.length === 1 ? 'the projection' : 'the projections'} ${names.join(', ')}`;
      this.host.notice(
        `${this.host.name()}: ${why === null ? 'building' : 'rebuilding'} ${what} from ${this.host.logName}${where}${why === null ? '' : `: ${why}`}`,
      );
    }
  }
}
