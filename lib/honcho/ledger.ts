/**
 * The Honcho ledger: memoryd's record of what it decided to send to Honcho, what it sent and what
 * failed, on any backend (by default the JSONL file `<home>/memory/honcho.jsonl`).
 *
 * - `open` reads the log through, replaying every record under the rules; a record that breaks
 *   them is damage, reported with its line, and nothing is changed. With a read model
 *   (`index`), it reads only what was appended since the read model's checkpoint.
 * - `append` checks the record against the state that includes every earlier append, writes it
 *   durably, and only then takes it into the state: a refused or failed append changes nothing.
 * - Appends made together (un-awaited, from many callers) share one write and one sync (group
 *   commit), in call order. Each record is checked against the state with the batch's earlier
 *   records applied; one that needs an earlier record of its batch (a `sent` after its
 *   `decided`) lands or fails with it, and one refused only because of an earlier record of its
 *   batch waits for the batch's outcome before it is checked again.
 * - Queries answer from the state: in memory, or from the read model in LevelDB.
 * - Live consumers follow the records as they are appended (`follow`) and wait for work
 *   (`waitForOutbox`), without polling.
 *
 * @module
 */
import { ClosedError, IndexBehindError, IndexDamagedError, ResumeMismatchError } from '../errors.js';
import type { EventLog, LogBackend, Position, Repair } from '../log.js';
import { normalizeRecord } from './codec.js';
import { ItemMap } from './item-map.js';
import { type Conclusion, type Decision, Projection } from './projection.js';
import { CatchUp } from './read-model/catch-up.js';
import { type IndexDatabase, ReadModel } from './read-model/read-model.js';
import type { Counts, Item, Record, Workspace } from './record.js';
import { type ItemState, refusal, stateAfter } from './rules.js';
import { type LedgerState, MemoryState, type OutboxCursor, type OutboxPage } from './state.js';

export type { Conclusion, Decision } from './projection.js';
export type { OutboxCursor, OutboxPage } from './state.js';

/** How to open a ledger. */
export interface LedgerOptions {
  /**
   * Read without the writer's lock and change nothing of the log: a cut-off last line is
   * ignored, not cut (`repair.cut` is `false`), and `append` is refused. (A read model given
   * with `index` is still brought up to date: it is derived, and this ledgerstore's own.)
   */
  readonly readOnly?: boolean;
  /**
   * A folder for the read model (created if missing): the state is kept there in LevelDB,
   * checkpointed, so that an open reads only what was appended since and queries do not hold
   * the ledger in memory. One process at a time (LevelDB's lock). Or an abstract-level database
   * of bytes the caller made (memory-level for tests), which the ledger leaves open. Default:
   * none, the state is rebuilt in memory at every open, as memoryd's spec has it.
   */
  readonly index?: string | IndexDatabase;
  /**
   * Told, once, of what an operator should know that is not an error: that the read model was
   * built or rebuilt from the log, and why. Default: a line on stderr.
   */
  readonly onNotice?: (message: string) => void;
}

/** The most records one write carries. */
const MAX_BATCH = 1024;
/** The largest cursor a page can give: the read model keeps decision order in 48 bits. */
const MAX_CURSOR = 2 ** 48 - 1;

interface Pending {
  readonly record: Record;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** A record as a live consumer sees it: with its position in the log. */
export interface LogEntry {
  readonly position: Position;
  readonly record: Record;
}

const noticeOnStderr = (message: string): void => {
  process.stderr.write(`ledgerstore: ${message}\n`);
};

/**
 * An open Honcho ledger, on the backend it was given. (The public `Ledger`, `lib/ledger.ts`, is
 * this class with `open` taking a target string too: this layer knows no backend.)
 */
export class HonchoLedger {
  private readonly queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  /** Set when `close` is called: no append is taken from then on. */
  private closed = false;
  /** Set once `close` has written what was queued: live consumers end when they have it all. */
  private ended = false;
  /** Set when the state could not take in records the log holds: appends stop until a reopen. */
  private stale: IndexBehindError | null = null;
  /** Called after each batch is taken into the state (live consumers). */
  private readonly listeners = new Set<(from: Position, records: readonly Record[]) => void>();
  /** The resolvers of waits that a close must end. */
  private readonly closers = new Set<() => void>();

  protected constructor(
    private readonly log: EventLog<Record>,
    private readonly state: LedgerState,
  ) {}

  /**
   * Opens the ledger on `backend` and reads it through. Made by the class it is called on, so
   * that the public `Ledger`'s open gives a `Ledger`.
   * @throws `DamagedError` when a line does not parse or breaks a rule (the log is unchanged)
   * @throws `LedgerIoError` when the file cannot be read
   * @throws `LockedError` when another writer has it open (or another process the read model)
   */
  static async open(backend: LogBackend<Record>, options: LedgerOptions = {}): Promise<HonchoLedger> {
    const readOnly = options.readOnly ?? false;
    if (options.index === undefined) {
      const projection = new Projection();
      const log = await backend.open({
        readOnly,
        replay: (record) => projection.replay(record),
        replayLine: (line) => projection.replayLine(line),
      });
      return new this(log, new MemoryState(projection, log));
    }
    const model = await ReadModel.open(options.index);
    try {
      const log = await openIndexed(backend, model, readOnly, options.onNotice ?? noticeOnStderr);
      return new this(log, model);
    } catch (e) {
      await model.close().catch(() => undefined);
      throw e;
    }
  }

  /** The log's name: the file's path for the JSONL backend. */
  get name(): string {
    return this.log.name;
  }

  /**
   * What `open` dropped at the end, a last line a crash cut off, and whether it was cut from the
   * file; `null` when nothing: the log's `repaired`, as `EventLog` has it.
   */
  get repaired(): Repair | null {
    return this.log.repaired;
  }

  /** @deprecated the same as {@link HonchoLedger.repaired} (which, before 0.2, said only whether there was one) */
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
   * @throws `LedgerIoError`, `ClosedError` when it could not be written; `IndexBehindError` (LEDGER_STOPPED) once the read model failed to take in appended records
   */
  append(record: Record): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError(this.name));
    if (this.stale !== null) return Promise.reject(this.stale);
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

  /**
   * Writes what is queued, a batch at a time, until the queue is empty. Every queued append is
   * settled, whatever fails: a flush never rejects, so that `close` always gets to close.
   */
  private async flush(): Promise<void> {
    // The queue is looked at and `flushing` cleared in one step, with no await between them:
    // an append made in between would find a flush running and wait for one that has ended.
    while (this.queue.length > 0) {
      try {
        await this.flushBatch();
      } catch (e) {
        // not expected (each step handles its failures); should one escape, no append waits forever
        for (const pending of this.queue.splice(0)) pending.reject(e);
      }
    }
    this.flushing = null;
  }

  /** Takes the next batch from the queue, writes it, and takes it into the state. */
  private async flushBatch(): Promise<void> {
    if (this.stale !== null) {
      // the state is behind the log: nothing queued can be checked against it
      for (const pending of this.queue.splice(0)) pending.reject(this.stale);
      return;
    }
    let batch: Pending[];
    try {
      batch = await this.takeBatch();
    } catch (e) {
      // the state could not be read (a read model's failed write is reported by its next
      // read): the records it was to check are refused with that, the next are tried again
      for (const pending of this.queue.splice(0, MAX_BATCH)) pending.reject(e);
      return;
    }
    if (batch.length === 0) return;
    const records = batch.map((p) => p.record);
    let from: Position;
    try {
      ({ from } = await this.log.append(records));
    } catch (e) {
      for (const pending of batch) pending.reject(e);
      return;
    }
    try {
      await this.state.apply(records, () => this.log.resumePoint());
    } catch (e) {
      // The records are in the log, durable: they are appended. But the state did not take
      // them in, so it cannot check the next ones: stop until a reopen catches it up.
      this.stale = new IndexBehindError(this.name, e instanceof Error ? e : new Error(String(e)));
    }
    for (const pending of batch) pending.resolve();
    for (const listener of this.listeners) listener(from, records);
  }

  /**
   * Takes the next records in call order, checking each against the state with the batch's
   * earlier records applied: an accepted one joins the batch, a refused one is rejected at once.
   * A record refused only because of an earlier record of the batch, which may yet fail, ends
   * the batch: it is checked again once the batch has landed or failed.
   */
  private async takeBatch(): Promise<Pending[]> {
    const candidates = this.queue.slice(0, MAX_BATCH);
    const states = await this.state.statesOf(candidates.map((p) => p.record.item));
    const staged = new ItemMap<ItemState>();
    const batch: Pending[] = [];
    let taken = 0;
    for (; taken < candidates.length; taken++) {
      const pending = candidates[taken] as Pending;
      const { item } = pending.record;
      const before = staged.get(item);
      const refused = refusal(pending.record, before ?? states[taken]);
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

  /** The item's state, as the rules see it: `undefined` when it is not decided. */
  async stateOf(item: Item): Promise<ItemState | undefined> {
    return (await this.state.statesOf([item]))[0];
  }

  /** Whether the item has its `decided` record (a `skip` counts). */
  isDecided(item: Item): Promise<boolean> {
    return this.state.isDecided(item);
  }

  /** Every waiting item with its action, in the order of the `decided` records. */
  outbox(): Promise<Decision[]> {
    return this.state.outbox();
  }

  /**
   * The outbox a page at a time, oldest first: up to `limit` waiting items after `after` (a
   * page's `next`), from the start when it is absent.
   * @throws RangeError when `limit` is not a whole number of at least 1, or `after` is not a cursor
   */
  outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage> {
    if (!Number.isSafeInteger(limit) || limit < 1)
      return Promise.reject(new RangeError(`outboxPage: the limit must be a whole number of at least 1, not ${limit}`));
    if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0 && after <= MAX_CURSOR)) {
      return Promise.reject(new RangeError(`outboxPage: ${after} is not a cursor (a page's \`next\`)`));
    }
    return this.state.outboxPage(limit, after);
  }

  /** The ids of the item's `sent` record; `null` when it has none (waiting, failed, skipped, unknown). */
  sentIds(item: Item): Promise<readonly string[] | null> {
    return this.state.sentIds(item);
  }

  /**
   * The conclusion an undo must delete: of the `Conclude`s of this workspace and text that were
   * sent (with an id), in the order their `sent` records were appended, the latest that no sent
   * `Unconclude` of the same workspace and text has taken off; `null` when none.
   */
  conclusion(workspace: Workspace, text: string): Promise<Conclusion | null> {
    return this.state.conclusion(workspace, text);
  }

  /** How many items are decided, sent, waiting, failed and skipped. */
  counts(): Promise<Counts> {
    return this.state.counts();
  }

  /** Every decided item with its action, in decision order. */
  decisions(): AsyncIterable<Decision> {
    return this.state.decisions();
  }

  /** The records from `from` (default 0), in order, as the log holds them. */
  records(from = 0): AsyncIterable<Record> {
    return this.log.read(from);
  }

  /**
   * The records from `from` on, each with its position: those the log holds now, then each one
   * appended through this ledger, as soon as it is durable and in the state, until `signal`
   * aborts or the ledger closes (after the records `close` was still writing). A consumer that
   * falls behind loses nothing: what is appended while it works waits for it, in order.
   */
  async *follow(from: Position = 0, signal?: AbortSignal): AsyncIterable<LogEntry> {
    const live: LogEntry[] = [];
    let wake: (() => void) | null = null;
    const listener = (first: Position, records: readonly Record[]): void => {
      records.forEach((record, n) => live.push({ position: first + n, record }));
      wake?.();
    };
    const stop = (): void => wake?.();
    // Listening first, then reading what the log holds: nothing appended in between is missed,
    // and what both give is told once (by position).
    this.listeners.add(listener);
    signal?.addEventListener('abort', stop);
    try {
      let next = from;
      const head = this.log.head;
      for await (const record of this.log.read(from)) {
        if (next >= head) break;
        yield { position: next++, record };
      }
      for (;;) {
        while (live.length > 0) {
          const appended = live.shift() as LogEntry;
          if (appended.position < next) continue;
          next = appended.position + 1;
          yield appended;
        }
        if (this.ended || signal?.aborted === true) return;
        await new Promise<void>((resolve) => {
          const done = (): void => {
            this.closers.delete(done);
            wake = null;
            resolve();
          };
          wake = done;
          this.closers.add(done);
        });
      }
    } finally {
      this.listeners.delete(listener);
      signal?.removeEventListener('abort', stop);
    }
  }

  /**
   * Resolves when the outbox holds an item: at once when it does now, else as soon as an append
   * through this ledger puts one there. Rejects with `ClosedError` if the ledger closes first, or
   * with the signal's reason when `signal` aborts.
   */
  async waitForOutbox(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.closed) throw new ClosedError(this.name);
      signal?.throwIfAborted();
      if ((await this.state.counts()).waiting > 0) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.listeners.delete(listener);
          this.closers.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const listener = (_: Position, records: readonly Record[]): void => {
          if (records.some((r) => r.type === 'decided' && r.action.type !== 'skip')) done();
        };
        this.listeners.add(listener);
        this.closers.add(done);
        signal?.addEventListener('abort', done);
      });
    }
  }

  /**
   * Waits for queued appends (each resolves or rejects), then closes the log and the state, and
   * ends live consumers once they have every record appended.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    this.ended = true;
    for (const close of this.closers) close();
    this.closers.clear();
    try {
      await this.log.close();
    } finally {
      await this.state.close();
    }
  }
}

/**
 * Opens the log resumed at the read model's checkpoint, replaying what follows it into the read
 * model; or, when the read model cannot be caught up (new, of another schema, unfinished,
 * damaged, or the log does not hold its checkpoint any more), rebuilds it from the log's start.
 */
async function openIndexed(
  backend: LogBackend<Record>,
  model: ReadModel,
  readOnly: boolean,
  notice: (message: string) => void,
): Promise<EventLog<Record>> {
  const reason = model.rebuildReason;
  if (reason !== null) {
    notice(`${model.folder}: rebuilding the index from ${backend.name}: ${reason}`);
    await model.reset();
  }
  const checkpoint = model.checkpoint;
  const replayInto = async (resume: boolean): Promise<EventLog<Record>> => {
    const catchUp = new CatchUp(model, backend.name);
    const log = await backend.open({
      readOnly,
      ...(resume && checkpoint !== null ? { resume: checkpoint.resume } : {}),
      replay: (record) => catchUp.replay(record),
    });
    try {
      await catchUp.finish(await log.resumePoint());
    } catch (e) {
      await log.close().catch(() => undefined);
      throw e;
    }
    if (checkpoint === null && catchUp.count > 0 && reason === null)
      notice(`${model.folder}: built the index of ${backend.name} (${catchUp.count} records)`);
    return log;
  };
  try {
    return await replayInto(checkpoint !== null);
  } catch (e) {
    // Damage the catch-up found in the rows it read (a checksum that does not match): the rows
    // are thrown away and built again, as for a log that does not hold the checkpoint.
    if (!(e instanceof ResumeMismatchError || (e instanceof IndexDamagedError && checkpoint !== null))) throw e;
    notice(
      `${model.folder}: rebuilding the index from ${backend.name}: ${e instanceof ResumeMismatchError ? e.message : e.why}`,
    );
    await model.reset();
    return replayInto(false);
  }
}
