/**
 * The Honcho ledger's state in a read model: four projections (`items.ts`, the item states and
 * decision order, which keep the rules; `outbox.ts`; `counts.ts`; `stacks.ts`, the conclusion
 * stacks), and any a user adds, kept by the engine (`lib/projections/`). Each query is answered
 * by the rows that answer it right now: the projection's own, or an older version's while its
 * version is built, or else the ledger replayed in memory (a {@link MemoryState}), which the open
 * keeps while any query has no rows to answer it, and lets go of once the builds have taken over.
 * The rules are checked against a complete state at every moment: the items projection's rows
 * once they are ready, the state in memory until then.
 *
 * Why this cut: each projection is rebuilt alone when its version changes, and each row a record
 * changes belongs to one of them. The items rows are the most (one an item) and the others small:
 * the outbox holds only the waiting items, the stacks only conclusions, the counts one row.
 *
 * @module
 */
import type { EventLog, LogBackend, ResumePoint } from '../../log.js';
import type { Db } from '../../projections/database.js';
import type { Loadable, ProjectionDefinition, ProjectionProgress } from '../../projections/definition.js';
import { ProjectionSet } from '../../projections/set.js';
import { type Conclusion, type Decision, Projection } from '../projection.js';
import type { Counts, Item, Record, Workspace } from '../record.js';
import { type ItemState, refusal } from '../rules.js';
import { type LedgerState, MemoryState, type OutboxCursor, type OutboxPage } from '../state.js';
import { countsProjection } from './counts.js';
import { itemsProjection } from './items.js';
import { outboxProjection } from './outbox.js';
import { stacksProjection } from './stacks.js';

/** The Honcho ledger's own projections. */
export const HONCHO_PROJECTIONS: readonly ProjectionDefinition<Record>[] = [
  itemsProjection,
  outboxProjection,
  countsProjection,
  stacksProjection,
];

/** How to open the state. */
export interface IndexedOptions {
  /** The read model's folder or database; `null`: no read model (the ledger in memory, a user's projections beside it). */
  readonly index: string | Db | null;
  /** Projections a user adds. */
  readonly projections: readonly ProjectionDefinition<Record>[];
  readonly readOnly: boolean;
  readonly onNotice: (message: string) => void;
  readonly waitForIndex: boolean;
  readonly worker: Loadable | undefined;
  readonly backgroundFrom: number | undefined;
}

/** Feeds `projection` a record, checking it against the rules first (a refusal is damage at its line). */
const feeding =
  (projection: Projection) =>
  (record: Record): void => {
    const refused = refusal(record, projection.stateOf(record.item));
    if (refused !== null) throw refused;
    projection.apply(record);
  };

/** The state of a ledger with a read model (or with projections of a user's). */
export class IndexedState implements LedgerState {
  private constructor(
    private readonly set: ProjectionSet<Record>,
    /** The ledger in memory, while some query has no rows to answer it (always, without a read model). */
    private memory: MemoryState | null,
    /** Whether the Honcho projections are in the read model (else the state in memory answers them). */
    private readonly indexed: boolean,
  ) {}

  /**
   * Opens the read model with the log, reading the log through as it needs: from the rows'
   * checkpoint, or from the start when the state in memory is to answer meanwhile.
   */
  static async open(
    backend: LogBackend<Record>,
    options: IndexedOptions,
  ): Promise<{ readonly state: IndexedState; readonly log: EventLog<Record> }> {
    const indexed = options.index !== null;
    // The state in memory reads a sent item's ids back from the log, which exists only once
    // the open returns: the projection is fed during the open, its state made after.
    let replayed: Projection | null = null;
    let state: IndexedState | null = null;
    const inMemory = (): ((record: Record) => void) => {
      replayed = new Projection();
      return feeding(replayed);
    };
    const { set, log } = await ProjectionSet.open(backend, {
      index: options.index,
      projections: indexed ? [...HONCHO_PROJECTIONS, ...options.projections] : options.projections,
      readOnly: options.readOnly,
      onNotice: options.onNotice,
      waitForIndex: options.waitForIndex,
      ...(options.worker === undefined ? {} : { worker: options.worker }),
      ...(options.backgroundFrom === undefined ? {} : { backgroundFrom: options.backgroundFrom }),
      answeredElsewhere: HONCHO_PROJECTIONS.map((p) => p.name),
      ...(indexed ? { fallback: () => inMemory() } : { replay: inMemory() }),
      onChange: () => state?.changed(),
    });
    const memory = replayed === null ? null : new MemoryState(replayed, log);
    state = new IndexedState(set, memory, indexed);
    state.changed();
    return { state, log };
  }

  /** A build took over: once rows answer every query, the state in memory is let go of. */
  private changed(): void {
    if (this.memory === null || !this.indexed) return;
    const answered = HONCHO_PROJECTIONS.every((definition) =>
      this.set.progress().some((p) => p.name === definition.name && p.state === 'ready'),
    );
    if (answered) this.memory = null;
  }

  /** The rows that answer `query` of `definition` now, or `null` (the state in memory answers). */
  private rows<Q extends object>(definition: ProjectionDefinition<Record, Q>, query: keyof Q & string): Q | null {
    return this.indexed ? this.set.answering(definition, query) : null;
  }

  private get inMemory(): MemoryState {
    if (this.memory === null) throw new Error('the read model has neither rows nor a state in memory to answer');
    return this.memory;
  }

  statesOf(items: readonly Item[]): Promise<(ItemState | undefined)[]> {
    return (this.rows(itemsProjection, 'statesOf') ?? this.inMemory).statesOf(items);
  }

  async apply(records: readonly Record[], point: () => Promise<ResumePoint>): Promise<void> {
    await this.memory?.apply(records);
    await this.set.apply(records, point);
  }

  isDecided(item: Item): Promise<boolean> {
    return (this.rows(itemsProjection, 'isDecided') ?? this.inMemory).isDecided(item);
  }

  outbox(): Promise<Decision[]> {
    return (this.rows(outboxProjection, 'outbox') ?? this.inMemory).outbox();
  }

  outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage> {
    return (this.rows(outboxProjection, 'outboxPage') ?? this.inMemory).outboxPage(limit, after);
  }

  sentIds(item: Item): Promise<readonly string[] | null> {
    return (this.rows(itemsProjection, 'sentIds') ?? this.inMemory).sentIds(item);
  }

  conclusion(workspace: Workspace, text: string): Promise<Conclusion | null> {
    return (this.rows(stacksProjection, 'conclusion') ?? this.inMemory).conclusion(workspace, text);
  }

  counts(): Promise<Counts> {
    return (this.rows(countsProjection, 'counts') ?? this.inMemory).counts();
  }

  decisions(): AsyncIterable<Decision> {
    return (this.rows(itemsProjection, 'decisions') ?? this.inMemory).decisions();
  }

  projections(): readonly ProjectionProgress[] {
    return this.set.progress();
  }

  whenReady(name?: string, signal?: AbortSignal): Promise<void> {
    return this.set.whenReady(name, signal);
  }

  queriesOf<Q extends object>(definition: ProjectionDefinition<Record, Q>): Q {
    return this.set.queries(definition);
  }

  close(): Promise<void> {
    return this.set.close();
  }
}
