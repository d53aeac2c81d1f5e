/**
 * The read model's background builds: a worker thread builds a projection's rows into a new
 * database up to a point of the log, then its rows are caught up with what was appended
 * meanwhile and take over in one step (the registry says so, the older rows are released). And
 * the release of rows nothing answers from any more. The set (`set.ts`) hands over what it owns
 * through a {@link BuildHost}.
 *
 * @module
 */
import { IndexDamagedError } from '../errors.js';
import type { Position, ResumePoint } from '../log.js';
import { BackgroundBuild } from './background.js';
import type { Loadable } from './definition.js';
import { Feeder } from './feeder.js';
import { Generation } from './generation.js';
import { after, type Checkpoint } from './layout.js';
import { databasesOf, newDatabase, withGenerations, without, withRole } from './registry.js';
import { type Slot, usable } from './set-plan.js';
import type { Store } from './store.js';

/** Records appended meanwhile left for the takeover's own turn; those before are caught up beside the appends. */
const LAST_CATCH_UP = 4096;

/** What the builds use of their set. */
export interface BuildHost<R> {
  readonly store: Store;
  /** The log's module for a worker thread to open. */
  readonly worker: Loadable | undefined;
  /** Tells the set's owner that the rows answering changed. */
  changed(): void;
  readonly logName: string;
  readonly slots: ReadonlyMap<string, Slot<R>>;
  /** The set's name, for notices. */
  name(): string;
  closed(): boolean;
  /** The checkpoint after the last batch the set took in. */
  applied(): Checkpoint | null;
  /** Runs `step` in the set's turn, after the appends and takeovers before it. */
  inTurn<T>(step: () => Promise<T>): Promise<T>;
  writeStatus(now: boolean): void;
  notice(message: string): void;
}

/** The builds running, their takeovers, and releases. */
export class Builds<R> {
  /** The builds running. */
  readonly running = new Set<BackgroundBuild<R>>();
  /** Releases under way (the set closes after them). */
  private releasing: Promise<void> = Promise.resolve();

  constructor(private readonly host: BuildHost<R>) {}

  /** Stops every build, and waits for the releases under way. */
  async stop(): Promise<void> {
    for (const build of this.running) await build.stop();
    this.running.clear();
    await this.releasing;
  }

  /** Starts a worker thread building `slots` up to `limit`, into a new database, then takes over with them. */
  async start(slots: readonly Slot<R>[], limit: ResumePoint): Promise<void> {
    const { registry: numbered, name } = newDatabase(this.host.store.registry);
    const { registry, entries } = withGenerations(
      numbered,
      slots.map((s) => ({ projection: s.definition.name, version: s.definition.version, db: name, role: 'building' })),
    );
    await this.host.store.writeRegistry(registry);
    const build = new BackgroundBuild<R>(
      {
        log: this.host.worker as Loadable,
        logName: this.host.logName,
        folder: this.host.store.pathOf(name),
        generations: entries.map((entry, n) => ({
          entry,
          definition: (slots[n] as Slot<R>).definition.worker as Loadable,
        })),
        limit,
      },
      name,
      () => this.host.writeStatus(false),
    );
    this.running.add(build);
    for (const slot of slots) slot.build = build;
    this.takeOver(build).catch((e: unknown) => this.buildFailed(build, e instanceof Error ? e : new Error(String(e))));
  }

  /**
   * Once `build` is done: opens its rows, catches them up with what was appended since its
   * limit (the most of it beside the appends, the last of it in a turn of its own), and lets
   * them take over in one step.
   */
  private async takeOver(build: BackgroundBuild<R>): Promise<void> {
    await build.finished;
    if (this.host.closed()) return;
    const { database, discarded } = await this.host.store.database(build.database);
    if (discarded !== null) throw new IndexDamagedError(database.name, discarded);
    const generations = build.generations.map((entry) => {
      const generation = new Generation(entry, (this.host.slots.get(entry.projection) as Slot<R>).definition, database);
      generation.load();
      if (!usable(generation) || generation.checkpoint?.resume.position !== build.limit.position)
        throw new IndexDamagedError(
          database.name,
          `the rows built of ${entry.id} are not at the point they were built to`,
        );
      return generation;
    });
    const feeder = new Feeder(
      generations.map((generation) => ({ generation, from: build.limit.position })),
      this.host.logName,
    );
    const catchUp = async (leave: number): Promise<void> => {
      while (build.appended.length > leave) {
        const { first, records } = build.appended.shift() as { first: Position; records: readonly R[] };
        for (let n = 0; n < records.length; n++) {
          const waited = feeder.push(records[n] as R, first + n);
          if (waited !== undefined) await waited;
        }
      }
    };
    await catchUp(LAST_CATCH_UP);
    await this.host.inTurn(async () => {
      if (this.host.closed()) return;
      await catchUp(0);
      await feeder.finish(this.host.applied() as Checkpoint, true);
      const slots = generations.map((g) => this.host.slots.get(g.entry.projection) as Slot<R>);
      const replaced = slots.flatMap((s) => [s.serving, s.previous]).filter((g): g is Generation<R> => g !== null);
      const copies = slots.flatMap((s) => (s.copy === null ? [] : [s.copy]));
      let registry = withRole(
        this.host.store.registry,
        generations.map((g) => g.entry.id),
        'serving',
      );
      registry = withRole(
        registry,
        replaced.map((g) => g.entry.id),
        'retired',
      );
      await this.host.store.writeRegistry(registry);
      slots.forEach((slot, n) => {
        slot.serving = generations[n] as Generation<R>;
        slot.previous = null;
        slot.copy = null;
        slot.build = null;
        slot.why = null;
      });
      this.running.delete(build);
      this.release(replaced);
      for (const copy of copies) copy.dropStaged();
      for (const slot of slots) slot.settle.resolve();
    });
    this.host.changed();
    this.host.writeStatus(true);
  }

  private buildFailed(build: BackgroundBuild<R>, e: Error): void {
    this.running.delete(build);
    if (this.host.closed()) return;
    for (const slot of this.host.slots.values()) {
      if (slot.build !== build) continue;
      slot.build = null;
      slot.why = `its build failed: ${e.message}`;
      slot.settle.reject(e);
    }
    this.host.notice(
      `${this.host.name()}: a build of ${this.host.logName} failed (${e.message}); its queries are answered as before, and the next open builds it again`,
    );
    this.host.writeStatus(true);
  }

  /**
   * Deletes the rows of `generations`, which nothing answers from any more: a database that holds
   * nothing else is removed, others have their keys cleared; then the registry forgets them.
   * Runs beside appends; a failure leaves them retired, for the next open to delete, and is told
   * (`onNotice`): rows left behind take room until then, and the next open may fail the same way.
   */
  release(generations: readonly Generation<R>[]): void {
    if (generations.length === 0) return;
    const ids = generations.map((g) => g.entry.id);
    this.releasing = this.releasing.then(async () => {
      try {
        const registry = this.host.store.registry;
        const keep = without(registry, ids);
        const databases = new Set(databasesOf(keep));
        for (const generation of generations) {
          const db = generation.entry.db;
          if (db !== null && !databases.has(db)) continue;
          await generation.db.clear(generation.prefix, after(generation.prefix));
        }
        await this.host.store.writeRegistry(without(this.host.store.registry, ids));
        for (const db of databasesOf(registry)) if (!databases.has(db)) await this.host.store.removeDatabase(db);
      } catch (e) {
        this.host.notice(
          `${this.host.name()}: the rows of ${ids.join(', ')}, which nothing answers from any more, could not be deleted (${e instanceof Error ? e.message : String(e)}); they are left retired, and the next open deletes them`,
        );
      }
    });
  }
}
