/**
 * Where a ledger keeps the state it answers from: in memory (`MemoryState`, the default, rebuilt
 * by reading the log through at every open), or in LevelDB (`ReadModel`, `read-model.ts`),
 * checkpointed, so that an open reads only what was appended since. The `Ledger` asks one of
 * them, through this interface, for the rule checks and for every query.
 *
 * @module
 */

import { LedgerIoError } from '../errors.js';
import type { Position, ResumePoint } from '../log.js';
import type { ProjectionDefinition, ProjectionProgress } from '../projections/definition.js';
import type { Conclusion, Decision, Projection } from './projection.js';
import { type Counts, type Item, type Record, sameItem, type Workspace } from './record.js';
import type { ItemState } from './rules.js';

/** A page of the outbox: up to `limit` waiting items after the one `after` points at. */
export interface OutboxPage {
  readonly decisions: readonly Decision[];
  /** Where the next page starts; `null` when this page ends the outbox. */
  readonly next: OutboxCursor | null;
}

/** A place in the outbox, from {@link OutboxPage.next}: the decision order of the last item seen. */
export type OutboxCursor = number;

/** The state of a ledger: what the rules check against, and what the queries answer. */
export interface LedgerState {
  /** The items' states, in the items' order (`undefined`: not decided). */
  statesOf(items: readonly Item[]): Promise<(ItemState | undefined)[]>;
  /**
   * {@link LedgerState.statesOf} answered within the call, by a state that holds its items at
   * hand (in memory): an append's turn then checks its batch with no wait between the queue and
   * the write. Absent on a state that must read them.
   */
  readonly statesNow?: (items: readonly Item[]) => (ItemState | undefined)[];
  /**
   * Takes in records the rules allow and the log has made durable, in log order; `point` gives
   * the log's point after them, which a checkpointed state keeps with them. A state in memory
   * takes them within the call (and returns nothing to wait for).
   */
  apply(records: readonly Record[], point: () => Promise<ResumePoint>): void | Promise<void>;
  isDecided(item: Item): Promise<boolean>;
  /** Every waiting item with its action, in decision order. */
  outbox(): Promise<Decision[]>;
  /** Up to `limit` waiting items, oldest first, after `after` (from the start when absent). */
  outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage>;
  sentIds(item: Item): Promise<readonly string[] | null>;
  conclusion(workspace: Workspace, text: string): Promise<Conclusion | null>;
  counts(): Promise<Counts>;
  /** Every decided item with its action, in decision order. */
  decisions(): AsyncIterable<Decision>;
  /** Where each projection of a read model stands (none in memory). */
  projections(): readonly ProjectionProgress[];
  /** Resolves once the projection `name` (every one, without a name) is ready. */
  whenReady(name?: string, signal?: AbortSignal): Promise<void>;
  /** The queries of a projection the ledger was opened with. */
  queriesOf<Q extends object>(definition: ProjectionDefinition<Record, Q>): Q;
  close(): Promise<void>;
}

/** Where a state in memory finds again what it does not keep: the log it was replayed from. */
export interface RecordSource {
  /** A name for messages (the log's). */
  readonly name: string;
  /** The records from `from` up to `to` (default: the end), in order. */
  read(from?: Position, to?: Position): AsyncIterable<Record>;
}

/**
 * The state in memory: a {@link Projection} of every record of `source` (its log), answered at
 * once, but for what the projection leaves in the log: a sent item's ids, read from its `sent`
 * record, and the decided records themselves, read in order.
 */
export class MemoryState implements LedgerState {
  constructor(
    private readonly projection: Projection,
    private readonly source: RecordSource,
  ) {}

  async statesOf(items: readonly Item[]): Promise<(ItemState | undefined)[]> {
    return this.statesNow(items);
  }

  readonly statesNow = (items: readonly Item[]): (ItemState | undefined)[] => {
    const states = new Array<ItemState | undefined>(items.length);
    for (let n = 0; n < items.length; n++) states[n] = this.projection.stateOf(items[n] as Item);
    return states;
  };

  apply(records: readonly Record[]): void {
    for (let n = 0; n < records.length; n++) this.projection.apply(records[n] as Record);
  }

  async isDecided(item: Item): Promise<boolean> {
    return this.projection.isDecided(item);
  }

  async outbox(): Promise<Decision[]> {
    return this.projection.outbox();
  }

  async outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage> {
    return this.projection.outboxPage(limit, after);
  }

  /** @throws {@link LedgerIoError} when the log holds another record where the item's `sent` was (it changed under the ledger) */
  async sentIds(item: Item): Promise<readonly string[] | null> {
    const position = this.projection.sentPosition(item);
    return position === null ? null : this.idsAt(position, item);
  }

  /**
   * The ids of the item's `sent` record, at `position` in the log: a read of that one position,
   * since a read open to the end costs a backend what is after it (a LevelDB iterator decodes
   * ahead, a JSONL read fills a buffer).
   */
  private async idsAt(position: Position, item: Item): Promise<readonly string[]> {
    for await (const record of this.source.read(position, position + 1)) {
      if (record.type === 'sent' && sameItem(record.item, item)) return record.ids;
      break;
    }
    throw changedUnder(this.source.name, position);
  }

  /**
   * The conclusion's id is the first of its item's `sent` record, read again from the log.
   * @throws {@link LedgerIoError} when the log holds another record there (it changed under the ledger)
   */
  async conclusion(workspace: Workspace, text: string): Promise<Conclusion | null> {
    const item = this.projection.concluded(workspace, text);
    if (item === null) return null;
    // a stacked conclusion is a sent one, sent with an id
    const position = this.projection.sentPosition(item) as Position;
    const id = (await this.idsAt(position, item))[0];
    if (id === undefined) throw changedUnder(this.source.name, position);
    return { item, id };
  }

  async counts(): Promise<Counts> {
    return this.projection.counts();
  }

  /** The `decided` records of the log, up to the last record taken in. */
  async *decisions(): AsyncIterable<Decision> {
    const end = this.projection.records;
    let position = 0;
    for await (const record of this.source.read(0)) {
      if (position++ >= end) return;
      if (record.type === 'decided') yield { item: record.item, action: record.action };
    }
    if (position < end) throw changedUnder(this.source.name, position);
  }

  projections(): readonly ProjectionProgress[] {
    return [];
  }

  async whenReady(name?: string): Promise<void> {
    if (name !== undefined) throw new TypeError(`the ledger was not opened with the projection ${name}`);
  }

  queriesOf<Q extends object>(definition: ProjectionDefinition<Record, Q>): Q {
    throw new TypeError(`the ledger was not opened with the projection ${definition.name}`);
  }

  async close(): Promise<void> {}
}

/** The log no longer holds at `position` the record the state took in there. */
function changedUnder(name: string, position: Position): LedgerIoError {
  return new LedgerIoError(
    name,
    new Error(
      `the log changed under the ledger: it no longer holds at position ${position} the record the ledger read there; reopen the ledger`,
    ),
    'read',
  );
}
