/**
 * The Honcho ledger: memoryd's record of what it decided to send to Honcho, what it sent and what
 * failed, on any backend (by default the JSONL file `<home>/memory/honcho.jsonl`).
 *
 * - `open` reads the log through, replaying every record under the rules; a record that breaks
 *   them is damage, reported with its line, and nothing is changed.
 * - `append` checks the record against the state that includes every earlier append, writes it
 *   durably, and only then takes it into the state: a refused or failed append changes nothing.
 * - Appends made together (un-awaited, from many callers) share one write and one sync (group
 *   commit), in call order. Each record is checked against the state with the batch's earlier
 *   records applied; one that needs an earlier record of its batch (a `sent` after its
 *   `decided`) lands or fails with it, and one refused only because of an earlier record of its
 *   batch waits for the batch's outcome before it is checked again.
 *
 * @module
 */
import { ClosedError } from '../errors.js';
import type { EventLog, Repair } from '../log.js';
import { type Target, backendFor } from '../target.js';
import { normalizeRecord } from './codec.js';
import { type Conclusion, type Decision, Projection } from './projection.js';
import { ItemMap } from './item-map.js';
import { type Counts, type Item, type Record, type Workspace } from './record.js';
import { type ItemState, refusal, stateAfter } from './rules.js';

export type { Conclusion, Decision } from './projection.js';

/** How to open a ledger. */
export interface LedgerOptions {
  /**
   * Read without the writer's lock and change nothing: a cut-off last line is ignored, not cut
   * (`repair.cut` is `false`), and `append` is refused.
   */
  readonly readOnly?: boolean;
}

/** The most records one write carries. */
const MAX_BATCH = 1024;

interface Pending {
  readonly record: Record;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** An open Honcho ledger. */
export class Ledger {
  private readonly queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly log: EventLog<Record>,
    private readonly state: Projection,
  ) {}

  /**
   * Opens the ledger at `target` and reads it through: a JSONL file's path (memoryd's default),
   * a URI (`jsonl:<path>`, `level:<folder>`, `memory:`; see `target.ts`), or a backend.
   * @throws `DamagedError` when a line does not parse or breaks a rule (the log is unchanged)
   * @throws `LedgerIoError` when the file cannot be read
   * @throws `LockedError` when another writer has it open
   */
  static async open(target: Target, options: LedgerOptions = {}): Promise<Ledger> {
    const backend = backendFor(target);
    const state = new Projection();
    const log = await backend.open({
      readOnly: options.readOnly ?? false,
      replay: (record) => {
        const refused = refusal(record, state.stateOf(record.item));
        if (refused !== null) throw refused;
        state.apply(record);
      },
    });
    return new Ledger(log, state);
  }

  /** The log's name: the file's path for the JSONL backend. */
  get name(): string {
    return this.log.name;
  }

  /** Whether `open` dropped a last line that a crash cut off. */
  get repaired(): boolean {
    return this.log.repaired !== null;
  }

  /** What `open` dropped, and whether it was cut from the file; `null` when nothing. */
  get repair(): Repair | null {
    return this.log.repaired;
  }

  /** The number of records in the ledger. */
  get size(): number {
    return this.log.head;
  }

  /**
   * Appends `record`: checks it against the rules and the state including every earlier append,
   * writes it durably, then takes it into the state. Resolves once it is on disk.
   * @throws `InvalidRecordError` when it is not a valid record
   * @throws `AlreadyDecidedError`, `NotWaitingError` when it breaks a rule
   * @throws `LedgerIoError`, `StoppedError`, `ClosedError` when it could not be written
   */
  append(record: Record): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError(this.name));
    let checked: Record;
    try {
      checked = normalizeRecord(record);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ record: checked, resolve, reject });
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  /** Writes what is queued, a batch at a time, until the queue is empty. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) continue;
      try {
        await this.log.append(batch.map((p) => p.record));
      } catch (e) {
        for (const pending of batch) pending.reject(e);
        continue;
      }
      for (const pending of batch) {
        this.state.apply(pending.record);
        pending.resolve();
      }
    }
    this.flushing = null;
  }

  /**
   * Takes the next records in call order, checking each against the state with the batch's
   * earlier records applied: an accepted one joins the batch, a refused one is rejected at once.
   * A record refused only because of an earlier record of the batch, which may yet fail, ends
   * the batch: it is checked again once the batch has landed or failed.
   */
  private takeBatch(): Pending[] {
    const staged = new ItemMap<ItemState>();
    const batch: Pending[] = [];
    let taken = 0;
    for (; taken < this.queue.length && batch.length < MAX_BATCH; taken++) {
      const pending = this.queue[taken] as Pending;
      const { item } = pending.record;
      const before = staged.get(item);
      const refused = refusal(pending.record, before ?? this.state.stateOf(item));
      if (refused === null) {
        staged.set(item, stateAfter(pending.record));
        batch.push(pending);
      } else if (before === undefined) {
        pending.reject(refused);
      } else {
        break;
      }
    }
    this.queue.splice(0, taken);
    return batch;
  }

  /** Whether the item has its `decided` record (a `skip` counts). */
  isDecided(item: Item): boolean {
    return this.state.isDecided(item);
  }

  /** Every waiting item with its action, in the order of the `decided` records. */
  outbox(): Decision[] {
    return this.state.outbox();
  }

  /** The ids of the item's `sent` record; `null` when it has none (waiting, failed, skipped, unknown). */
  sentIds(item: Item): readonly string[] | null {
    return this.state.sentIds(item);
  }

  /**
   * The conclusion an undo must delete: of the `Conclude`s of this workspace and text that were
   * sent (with an id), in the order their `sent` records were appended, the latest that no sent
   * `Unconclude` of the same workspace and text has taken off; `null` when none.
   */
  conclusion(workspace: Workspace, text: string): Conclusion | null {
    return this.state.conclusion(workspace, text);
  }

  /** How many items are decided, sent, waiting, failed and skipped. */
  counts(): Counts {
    return this.state.counts();
  }

  /** Every decided item with its action, in decision order. */
  decisions(): IterableIterator<Decision> {
    return this.state.decisions();
  }

  /** The records from `from` (default 0), in order, as the log holds them. */
  records(from = 0): AsyncIterable<Record> {
    return this.log.read(from);
  }

  /** Waits for queued appends, then closes the log. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    await this.log.close();
  }
}
