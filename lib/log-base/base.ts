/**
 * The base of a log: the promises of `log.ts` that no backend's I/O decides, kept once, so that
 * every backend refuses alike (as abstract-level's public methods check and its `_methods` do
 * the I/O). A backend extends {@link StoredLog} and writes only its I/O; a log that wraps
 * another (the fault wrapper) extends {@link LogBase}.
 *
 * What the base keeps:
 * - **The guards, in one order.** An append is refused, first to last: closed
 *   ({@link ClosedError}), read-only ({@link ReadOnlyError}), stopped ({@link StoppedError}, or
 *   the stopping error itself when it has that code), a record that `codec.normalize` refuses
 *   (the codec's `InvalidRecordError`; a {@link CheckedRecord} the log's own codec made is
 *   taken as it is), the expected head ({@link ConflictError}), and only then
 *   does an empty batch resolve, writing nothing. Closed, read-only and stopped are looked at
 *   when `append` is called, and stopped again when its turn comes (an earlier append may have
 *   stopped the log meanwhile); the records are checked when it is called, into fresh values a
 *   caller's later changes do not reach.
 * - **Call order.** Appends run one at a time, each after every earlier one settled. When none
 *   is running, an append's turn starts within the call: a synchronous backend's append (the
 *   JSONL file's `write` and `fdatasync`) then runs whole before `append` returns, at no cost.
 * - **One writer per process**, by the key a backend names (a file's absolute path, a database
 *   object); a backend whose storage locks itself (a LevelDB folder) or that has several writers
 *   names none.
 * - **The read-through at open**: the records from the resume point on, each handed to
 *   `replay`; a record refused (by `replay`, or by the codec as it is read) is damage at its
 *   position, counted from 1 ({@link asDamage}); a failed open leaves the log as it was and
 *   holds nothing.
 * - **The resume check**: the stored record before the point must have the point's fingerprint.
 * - **Closed reads, resume points and closes**: every operation on a closed log fails with
 *   {@link ClosedError} (a read in progress ends after the record in hand); a resume point and
 *   a close wait for the appends called before them.
 * - **A read's end**: `read(from, to)` stops at `to` whatever the backend hands over.
 * - **Refresh in turn, and a log that went back**: `refresh` takes its turn among the appends
 *   (an append landing while the store's head is looked at would look like a step back); a
 *   store found shorter than `head` stops the log ({@link LogWentBackError}).
 * - **Watches and leases end with the log**: a close stops every watch and gives up every
 *   lease first; with one writer, the writer holds every lease, one holder each.
 * - **Disposal**: `[Symbol.asyncDispose]` is `close`, for `await using`.
 *
 * @module
 */
import { asDamage, ClosedError, isLedgerError, type LedgerError, ReadOnlyError, StoppedError } from '../errors.js';
import type { ScannedLines } from '../line-scan.js';
import type {
  Appendable,
  Appended,
  AppendOptions,
  EventLog,
  HeadWatcher,
  Lease,
  LogCapabilities,
  Position,
  Repair,
  ResumePoint,
  Unwatch,
} from '../log.js';

/**
 * Records as a backend hands them over: in order, a batch at a time (a chunk of a file, a page
 * of rows). A batch may be lazy (each record decoded as it is reached, so that a record that
 * does not read fails in its place, after the records before it were replayed); it is gone
 * through whole before the next is asked for. A batch of the read-through at open may be a run
 * of lines its codec scanned ({@link ScannedLines}), each handed to `replayLine` when the open
 * has one.
 */
export type Batches<R> = Iterable<Iterable<R>> | AsyncIterable<Iterable<R>>;

/** The read-through's batches: records, or runs of scanned lines. */
export type EntryBatches<R> = Iterable<Iterable<R> | ScannedLines<R>> | AsyncIterable<Iterable<R> | ScannedLines<R>>;

/** What a log is, for the base: fixed when it is made. */
export interface LogSpec {
  /** The log's name in messages: a file's path, a folder, a URI. */
  readonly name: string;
  readonly capabilities: LogCapabilities;
  readonly readOnly: boolean;
}

/**
 * The calls every log answers the same way: the guards, call order, closed reads, resume points
 * after the appends called before them, and close. A subclass writes `append` (with
 * {@link LogBase.assertAppendable} and {@link LogBase.inTurn}), {@link LogBase._read},
 * {@link LogBase._resumePoint} and {@link LogBase._close}; a log over storage of its own
 * extends {@link StoredLog}, which writes `append` once for every backend.
 */
export abstract class LogBase<R> implements EventLog<R> {
  readonly name: string;
  readonly capabilities: LogCapabilities;
  protected readonly readOnly: boolean;
  private closed = false;
  private closing: Promise<void> | null = null;
  /** Why appends are refused until a reopen, once an append left the log's end uncertain. */
  private stopped: LedgerError | null = null;
  /** Appends (and refreshes) called and not yet settled (running or waiting their turn). */
  private inFlight = 0;
  /** The watches running: each stops itself. */
  private readonly watches = new Set<Unwatch>();
  /** The leases held through this log, by name. */
  private readonly leases = new Map<string, Lease>();
  /** The last of them, settled either way: the next turn starts after it. */
  private tail: Promise<unknown> = Promise.resolve();

  protected constructor({ name, capabilities, readOnly }: LogSpec) {
    this.name = name;
    this.capabilities = capabilities;
    this.readOnly = readOnly;
  }

  abstract get head(): Position;

  /** The failure that stopped the log, or `null` while it runs. */
  protected get stoppedBy(): LedgerError | null {
    return this.stopped;
  }

  abstract get repaired(): Repair | null;
  abstract append(records: readonly Appendable<R>[], options?: AppendOptions): Promise<Appended<R>>;

  async *read(from: Position = 0, to?: Position): AsyncIterable<R> {
    this.assertOpen();
    let position = Math.max(0, Math.ceil(from));
    const end = to === undefined ? undefined : Math.max(position, Math.floor(to));
    if (end === position) return;
    try {
      for await (const batch of this._read(position, end)) {
        for (const record of batch) {
          // a read in progress when the log is closed ends after the record in hand
          this.assertOpen();
          yield record;
          position++;
          if (position === end) return;
        }
        this.assertOpen();
      }
    } catch (e) {
      // storage closed under a read fails it: that is this log's close, unless it found damage
      if (this.closed && !isLedgerError(e, 'LEDGER_DAMAGED')) throw new ClosedError(this.name);
      throw asDamage(this.name, position + 1, e);
    }
  }

  async resumePoint(): Promise<ResumePoint> {
    this.assertOpen();
    if (this.inFlight > 0) await this.tail; // at the head after every append called so far
    return this._resumePoint();
  }

  refresh(): Promise<Position> {
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.inTurn(() => this._refresh());
  }

  /**
   * Starts a watch through `start` (the backend's), and ends it when the log closes, or when it
   * fails (after `onFailure`, called once).
   * @throws {@link ClosedError} on a closed log
   */
  protected async watching(watcher: HeadWatcher, start: (watcher: HeadWatcher) => Promise<Unwatch>): Promise<Unwatch> {
    this.assertOpen();
    let unwatch: Unwatch | null = null;
    let failed = false;
    const stop: Unwatch = async () => {
      if (!this.watches.delete(stop)) return;
      await unwatch?.();
    };
    this.watches.add(stop);
    try {
      unwatch = await start({
        onHead: (head) => {
          if (!this.watches.has(stop)) return;
          try {
            watcher.onHead(head);
          } catch (e) {
            // The caller's bug, not the store's: told as Node tells a listener's (an uncaught
            // exception), never as a failure of the log (LEDGER_IO would send an operator to
            // the disk); the watch, which did nothing wrong, goes on.
            queueMicrotask(() => {
              throw e;
            });
          }
        },
        onFailure: (failure) => {
          if (failed || !this.watches.has(stop)) return;
          failed = true;
          void stop();
          watcher.onFailure?.(failure);
        },
      });
    } catch (e) {
      this.watches.delete(stop);
      throw e;
    }
    if (!this.watches.has(stop) || this.closed) {
      // closed, or failed, while it started
      this.watches.delete(stop);
      await unwatch();
      this.assertOpen();
    }
    return stop;
  }

  async lease(name: string): Promise<Lease | null> {
    this.assertAppendable();
    if (this.leases.has(name)) return null;
    const held = await this._lease(name);
    if (held === null) return null;
    if (this.closed || this.leases.has(name)) {
      await held.release();
      this.assertOpen();
      return null;
    }
    const release = async (): Promise<void> => {
      if (this.leases.get(name) === lease) this.leases.delete(name);
      await held.release();
    };
    const lease: Lease = { signal: held.signal, release };
    held.signal.addEventListener('abort', () => {
      if (this.leases.get(name) === lease) this.leases.delete(name);
    });
    this.leases.set(name, lease);
    return lease;
  }

  /** Refuses appends from now on, lets those called already settle, then releases the storage. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.inFlight > 0 ? this.tail.then(() => this.closeNow()) : this.closeNow();
    return this.closing;
  }

  /** `await using log = await backend.open()`: the log is closed as the scope ends (see {@link LogBase.close}). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Stops the watches and gives up the leases, closes the storage, and then gives up the
   * writer's place. Synchronous as far as `_close` is: a JSONL log's place is free once
   * `close()` has returned, before its promise settles.
   */
  private closeNow(): Promise<void> {
    const ending = [...this.watches, ...[...this.leases.values()].map((lease) => () => lease.release())].map((end) =>
      end().catch(() => undefined),
    );
    this.leases.clear();
    let closed: void | Promise<void>;
    try {
      closed = this._close();
    } catch (e) {
      this.released();
      return Promise.reject(e);
    }
    if (!(closed instanceof Promise)) {
      this.released();
      return ending.length === 0 ? Promise.resolve() : Promise.all(ending).then(() => undefined);
    }
    return Promise.all([closed, ...ending])
      .then(() => undefined)
      .finally(() => this.released());
  }

  /** Called once the storage is closed (a {@link StoredLog} gives up its writer's place here). */
  protected released(): void {}

  /** @throws {@link ClosedError} once `close` was called */
  protected assertOpen(): void {
    if (this.closed) throw new ClosedError(this.name);
  }

  /** The guards looked at when `append` is called: closed, read-only, stopped, in that order. */
  protected assertAppendable(): void {
    this.assertOpen();
    if (this.readOnly) throw new ReadOnlyError(this.name);
    this.assertRunning();
  }

  /** @throws the {@link StoppedError} (or the stopping error of that code) once the log stopped */
  protected assertRunning(): void {
    const failure = this.stopped;
    if (failure !== null) throw failure.code === 'LEDGER_STOPPED' ? failure : new StoppedError(this.name, failure);
  }

  /**
   * Stops the log: every later append is refused until it is reopened. For a failure after
   * which the log's end is not known (a failed sync, a lost acknowledgement), where a retry
   * could report success for records that are gone.
   */
  protected stop(failure: LedgerError): void {
    this.stopped = failure;
  }

  /**
   * Runs `turn` after every earlier append (and turn) settled: at once, within this call, when
   * none is running. The promise settles as `turn` does.
   */
  protected inTurn<T>(turn: () => T | Promise<T>): Promise<T> {
    if (this.inFlight > 0) return this.track(this.tail.then(turn));
    let result: T | Promise<T>;
    try {
      result = turn();
    } catch (e) {
      return Promise.reject(e);
    }
    return result instanceof Promise ? this.track(result) : Promise.resolve(result);
  }

  private track<T>(running: Promise<T>): Promise<T> {
    this.inFlight++;
    const settled = running.finally(() => {
      this.inFlight--;
    });
    this.tail = settled.then(
      () => undefined,
      () => undefined,
    );
    return settled;
  }

  /**
   * The records from `from` (a whole number) up to `to` (a whole number past `from`), or without
   * it up to the head when the read starts, in batches. A record that does not read is thrown in
   * its place, after the records before it (a refusal becomes damage at its position). The base
   * stops at `to`: a backend may read further.
   */
  protected abstract _read(from: Position, to: Position | undefined): Batches<R>;

  /** The store's head, made this log's `head` (no append is running); see {@link EventLog.refresh}. */
  protected abstract _refresh(): Position | Promise<Position>;

  /**
   * Takes the lease `name`, which no holder through this log object has: `null` when another
   * holder has it. One writer (the default): the writer is the only holder there can be, so it
   * is taken here, held until released or the log closes. A backend with several writers keeps
   * its leases in its storage and says so here.
   */
  protected _lease(name: string): Lease | null | Promise<Lease | null> {
    if (this.capabilities.severalWriters)
      throw new TypeError(`${this.name}: a log with several writers must keep its leases (${name}) in its storage`);
    const held = new AbortController();
    return { signal: held.signal, release: async () => held.abort() };
  }

  /** The point at the head now (no append is running). */
  protected abstract _resumePoint(): ResumePoint | Promise<ResumePoint>;

  /** Releases the storage (after every append called settled). */
  protected abstract _close(): void | Promise<void>;
}
