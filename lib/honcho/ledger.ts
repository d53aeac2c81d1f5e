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
 *   (`waitForOutbox`), without polling (`live.ts`).
 *
 * ## Several writers
 *
 * Other writers (processes on a PostgreSQL log, a JSONL file's writer beside a read-only
 * ledger) append too; the state reflects the log up to `applied` (what `size` says). Every
 * write passes `expectedHead = applied`, so that each committed batch was checked against
 * exactly the records before it. On a `ConflictError` the ledger catches up (`others.ts`:
 * reads what the others appended, checks it against the rules, takes it in, tells the live
 * consumers) and puts the batch back at the front of the queue, to be checked again: an item
 * another process decided meanwhile is refused (`LEDGER_ALREADY_DECIDED`), nothing is decided
 * twice, and group commit goes on. On a log with `keyedAppends` each write also gives its
 * records' items as keys: the rules look at one item at a time, so the log may put the batch
 * after others' records of other items instead of refusing it, and gives those records, which
 * the ledger checks as a catch-up does and takes in with the batch, in log order: writers of
 * different items then never need a catch-up. Live consumers start the log's watch and catch up on each
 * head it tells of. Records of others that break the rules (`LEDGER_DAMAGED`), or a log that
 * went back (`LEDGER_STOPPED`), stop the ledger until a reopen. The rules stop a second record,
 * not a second call to Honcho: one sender holds the {@link HonchoLedger.senderLease}.
 *
 * @module
 */
import { ClosedError, type LedgerError } from '../errors.js';
import { CheckedRecord, type EventLog, type Lease, type LogBackend, type Position, type Repair } from '../log.js';
import type { ProjectionDefinition, ProjectionProgress } from '../projections/definition.js';
import {
  itemArgument,
  projectionArgument,
  signalArgument,
  textArgument,
  wholeArgument,
  workspaceArgument,
} from './arguments.js';
import { honchoCodec } from './codec.js';
import { GroupCommit } from './group-commit.js';
import { Live, type LogEntry } from './live.js';
import { openState } from './open-state.js';
import { checkLedgerOptions, type LedgerOptions } from './options.js';
import { Others } from './others.js';
import type { Conclusion, Decision } from './projection.js';
import type { Counts, Item, Record, Workspace } from './record.js';
import type { ItemState } from './rules.js';
import type { LedgerState, OutboxCursor, OutboxPage } from './state.js';

export type { Db as IndexDatabase } from '../projections/database.js';
export type { LogEntry } from './live.js';
export type { LedgerOptions } from './options.js';
export { MAX_RETRY_MS } from './others.js';
export type { Conclusion, Decision } from './projection.js';
export type { OutboxCursor, OutboxPage } from './state.js';

/** The lease a ledger's one sender holds (see {@link HonchoLedger.senderLease}). */
const SENDER_LEASE = 'sender';

/** The largest cursor a page can give: the read model keeps decision order in 48 bits. */
const MAX_CURSOR = 2 ** 48 - 1;

/**
 * An open Honcho ledger, on the backend it was given. (The public `Ledger`, `lib/ledger.ts`, is
 * this class with `open` taking a target string too: this layer knows no backend.)
 */
export class HonchoLedger {
  /** Set when `close` is called: no append is taken from then on. */
  private closed = false;
  /** Where the state is in the log, and the catch-up with what others append. */
  private readonly others: Others;
  private readonly live: Live;
  private readonly commits: GroupCommit;

  /** The close, once it was called: a second `close` (or dispose) waits for the same. */
  private closing: Promise<void> | null = null;

  protected constructor(
    private readonly log: EventLog<Record>,
    private readonly state: LedgerState,
  ) {
    this.others = new Others({
      name: log.name,
      log,
      state,
      told: (from, records) => this.live.tell(from, records),
      stopped: () => this.live.wake(),
      kick: () => this.commits.kick(),
    });
    this.live = new Live({
      name: log.name,
      read: (from, to) => log.read(from, to),
      applied: () => this.others.applied,
      counts: () => state.counts(),
      closed: () => this.closed,
      failure: () => this.others.failure,
      listen: () => this.others.listen(),
    });
    this.commits = new GroupCommit({ log, state, others: this.others, live: this.live });
  }

  /**
   * The failure that stopped the ledger (the state could not take in records the log holds, a
   * damaged read model, a log that cannot be followed any more: `others.ts`), or `null`: once
   * set, appends stop until a reopen, and live consumers end with it.
   */
  private get failure(): LedgerError | null {
    return this.others.failure;
  }

  /**
   * Opens the ledger on `backend` and reads it through. Made by the class it is called on, so
   * that the public `Ledger`'s open gives a `Ledger`.
   * @throws `DamagedError` when a line does not parse or breaks a rule (the log is unchanged)
   * @throws `LedgerIoError` when the file cannot be read
   * @throws `LockedError` when another writer has it open (or another process the read model)
   * @throws `BadArgumentError` (LEDGER_BAD_ARGUMENT) when `options` is no object, holds a key that is no option, or an option of the wrong type
   */
  static async open(backend: LogBackend<Record>, options: LedgerOptions = {}): Promise<HonchoLedger> {
    checkLedgerOptions('Ledger.open', options);
    const { log, state } = await openState(backend, options);
    return new this(log, state);
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

  /** The number of records in the ledger: those its state reflects (others may have appended since). */
  get size(): number {
    return this.others.applied;
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
    if (this.failure !== null) return Promise.reject(this.failure);
    let checked: CheckedRecord<Record>;
    try {
      checked = CheckedRecord.check(honchoCodec, record);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.commits.push(checked);
  }

  /**
   * Takes in what other writers (other processes) appended before this call: resolves once the
   * state reflects the log's head as it was then, and live consumers have been told. A live
   * consumer does this by itself, as the log tells of new records; a query after this is
   * current.
   * @throws `LedgerIoError` when the log cannot be read (nothing was taken in); the error that
   *   stopped the ledger when the records break the rules or the log went back
   */
  catchUp(): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError(this.name));
    return this.others.ask();
  }

  /**
   * The sender's lease: at most one holder at a time among every process on this ledger, so
   * that no item is sent to Honcho twice. Resolves with it once this ledger holds it and has
   * caught up (what an earlier holder recorded as sent is in the state, off the outbox); `null`
   * when another holds it (try again later). It dies with its holder (a process that ends, a
   * connection lost): a sender looks at `lease.signal.aborted` before each send and stops once
   * it is. With one writer (a JSONL file) the writer holds it. See docs/postgres.md, "Sending
   * once".
   * @throws `ReadOnlyError` on a read-only ledger, which cannot record what it sends
   */
  async senderLease(): Promise<Lease | null> {
    if (this.closed) throw new ClosedError(this.name);
    const lease = await this.log.lease(SENDER_LEASE);
    if (lease === null) return null;
    try {
      await this.catchUp();
    } catch (e) {
      await lease.release();
      throw e;
    }
    return lease;
  }

  /**
   * Runs `query` on an open ledger: every query of a closed ledger is refused alike, and a bad
   * argument (thrown by `query` as it checks them) rejects the promise rather than throwing.
   */
  private ask<T>(query: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError(this.name));
    try {
      return query();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** `make`'s records, the ledger open and `check` passed when they are iterated (at no cost a record). */
  private iterated<T>(make: () => AsyncIterable<T>, check?: () => void): AsyncIterable<T> {
    return {
      [Symbol.asyncIterator]: () => {
        if (this.closed) throw new ClosedError(this.name);
        check?.();
        return make()[Symbol.asyncIterator]();
      },
    };
  }

  /** @throws {@link ClosedError} once `close` was called */
  private assertOpen(): void {
    if (this.closed) throw new ClosedError(this.name);
  }

  /**
   * The item's state, as the rules see it: `undefined` when it is not decided.
   * @throws `BadArgumentError` when `item` is no item; `ClosedError` once the ledger is closed
   */
  stateOf(item: Item): Promise<ItemState | undefined> {
    return this.ask(async () => (await this.state.statesOf([itemArgument('stateOf', item)]))[0]);
  }

  /**
   * Whether the item has its `decided` record (a `skip` counts).
   * @throws `BadArgumentError` when `item` is no item (`null`, a turn without its session); `ClosedError` once the ledger is closed
   */
  isDecided(item: Item): Promise<boolean> {
    return this.ask(() => this.state.isDecided(itemArgument('isDecided', item)));
  }

  /**
   * Every waiting item with its action, in the order of the `decided` records.
   * @throws `ClosedError` once the ledger is closed
   */
  outbox(): Promise<Decision[]> {
    return this.ask(() => this.state.outbox());
  }

  /**
   * The outbox a page at a time, oldest first: up to `limit` waiting items after `after` (a
   * page's `next`), from the start when it is absent.
   * @throws `BadArgumentError` when `limit` is not a whole number of at least 1, or `after` is not a cursor; `ClosedError` once the ledger is closed
   */
  outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage> {
    return this.ask(() => {
      wholeArgument('outboxPage', 'limit', limit, 1, Number.MAX_SAFE_INTEGER);
      if (after !== undefined) wholeArgument('outboxPage', 'after', after, 0, MAX_CURSOR);
      return this.state.outboxPage(limit, after);
    });
  }

  /**
   * The ids of the item's `sent` record; `null` when it has none (waiting, failed, skipped,
   * unknown). Without a read model the state keeps where that record is, not its ids (they are
   * most of a ledger's bytes), so this reads the log there, a record's worth of I/O; with one,
   * it reads the item's row.
   * @throws `LedgerIoError` when the log (or the read model) cannot be read there, or the log holds another record there
   * @throws `BadArgumentError` when `item` is no item; `ClosedError` once the ledger is closed
   */
  sentIds(item: Item): Promise<readonly string[] | null> {
    return this.ask(() => this.state.sentIds(itemArgument('sentIds', item)));
  }

  /**
   * The conclusion an undo must delete: of the `Conclude`s of this workspace and text that were
   * sent (with an id), in the order their `sent` records were appended, the latest that no sent
   * `Unconclude` of the same workspace and text has taken off; `null` when none (memoryd's
   * `None`), in any of the three workspaces. Without a read model its id is read from that
   * `sent` record in the log, as {@link HonchoLedger.sentIds} reads ids.
   * @throws `LedgerIoError` when the log (or the read model) cannot be read there, or the log holds another record there
   * @throws `BadArgumentError` when `workspace` is none of `trusted`, `untrusted`, `fleet` (memoryd's
   *   `Workspace` has no other), or `text` is no string; `ClosedError` once the ledger is closed
   */
  conclusion(workspace: Workspace, text: string): Promise<Conclusion | null> {
    return this.ask(() =>
      this.state.conclusion(workspaceArgument('conclusion', workspace), textArgument('conclusion', 'text', text)),
    );
  }

  /**
   * How many items are decided, sent, waiting, failed and skipped.
   * @throws `ClosedError` once the ledger is closed
   */
  counts(): Promise<Counts> {
    return this.ask(() => this.state.counts());
  }

  /**
   * Every decided item with its action, in decision order.
   * @throws `ClosedError`, as it is iterated, once the ledger is closed
   */
  decisions(): AsyncIterable<Decision> {
    return this.iterated(() => this.state.decisions());
  }

  /**
   * Where each projection of the read model stands: ready, or building (how far, how fast, and
   * what answers meanwhile). Empty without a read model or projections.
   * @throws `ClosedError` once the ledger is closed
   */
  projections(): readonly ProjectionProgress[] {
    this.assertOpen();
    return this.state.projections();
  }

  /**
   * Resolves once the projection `name` (every projection, without a name) is ready: answered
   * by rows of its version. At once when it is.
   * @throws the build's failure; `ClosedError` if the ledger is closed or closes first; `signal`'s reason
   * @throws `BadArgumentError` when the ledger was not opened with a projection `name`, or `signal` is no `AbortSignal`
   */
  whenReady(name?: string, signal?: AbortSignal): Promise<void> {
    return this.ask(() => {
      if (name !== undefined) projectionArgument('whenReady', 'name', name, this.state.projections());
      signalArgument('whenReady', signal);
      return this.state.whenReady(name, signal);
    });
  }

  /**
   * The queries of a projection the ledger was opened with (`projections`), answered by its
   * rows, or while they are built by what answers in their place.
   * @throws `BadArgumentError` when the ledger was not opened with it; `ClosedError` once the ledger is closed
   */
  projection<Q extends object>(definition: ProjectionDefinition<Record, Q>): Q {
    this.assertOpen();
    const name = (definition as { name?: unknown } | null)?.name;
    projectionArgument('projection', 'definition', name, this.state.projections());
    return this.state.queriesOf(definition);
  }

  /**
   * The records from `from` (default 0), in order, as the log holds them.
   * @throws `BadArgumentError`, as it is iterated, when `from` is not a whole number of at least 0; `ClosedError` once the ledger is closed
   */
  records(from: Position = 0): AsyncIterable<Record> {
    return this.iterated(
      () => this.log.read(from),
      () => wholeArgument('records', 'from', from, 0, Number.MAX_SAFE_INTEGER),
    );
  }

  /**
   * The records from `from` on, each with its position: those the state holds now, then each one
   * appended, through this ledger or by another writer (which the log's watch tells of), as
   * soon as it is durable and in the state, until `signal` aborts or the ledger closes (after
   * the records `close` was still writing). A consumer that falls behind loses nothing: what is
   * appended while it works waits for it, in order. Ends with the error that stopped the ledger.
   * @throws `BadArgumentError`, as it is iterated, when `from` is not a whole number of at least 0, or `signal` is no `AbortSignal`
   * @throws `ClosedError`, as it is iterated, when the ledger was closed before `follow` was called
   */
  follow(from: Position = 0, signal?: AbortSignal): AsyncIterable<LogEntry> {
    // a follow called before the close ends with it (its last records given), as said above
    const closed = this.closed;
    return {
      [Symbol.asyncIterator]: () => {
        if (closed) throw new ClosedError(this.name);
        wholeArgument('follow', 'from', from, 0, Number.MAX_SAFE_INTEGER);
        signalArgument('follow', signal);
        return this.live.follow(from, signal)[Symbol.asyncIterator]();
      },
    };
  }

  /**
   * Resolves when the outbox holds an item: at once when it does now, else as soon as an append
   * puts one there, through this ledger or by another writer (which the log's watch tells of).
   * Rejects with `ClosedError` if the ledger is closed or closes first, with the signal's reason when
   * `signal` aborts, or with the error that stopped the ledger.
   * @throws `BadArgumentError` when `signal` is no `AbortSignal`
   */
  waitForOutbox(signal?: AbortSignal): Promise<void> {
    return this.ask(() => {
      signalArgument('waitForOutbox', signal);
      return this.live.waitForOutbox(signal);
    });
  }

  /**
   * Waits for queued appends (each resolves or rejects), then closes the log and the state, and
   * ends live consumers once they have every record appended. From the call on, every other call
   * is refused with `ClosedError` (LEDGER_CLOSED). A second call waits for the same close.
   */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.closeNow();
    return this.closing;
  }

  /** `await using ledger = await Ledger.open(...)`: the ledger is closed as the scope ends (see {@link HonchoLedger.close}). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private async closeNow(): Promise<void> {
    // the watch first: a head it hears while the last flush runs would start another flush
    await this.others.close();
    await this.commits.settled();
    this.live.end();
    try {
      await this.log.close();
    } finally {
      await this.state.close();
    }
  }
}
