/**
 * A Honcho ledger's live consumers: `follow()`, which hands out the records as they are taken
 * into the state, and `waitForOutbox()`, which waits for work, both without polling. They hear
 * of every batch the state takes in: the ledger's own appends, and what a catch-up took in of
 * other writers' appends (`others.ts`).
 *
 * A consumer that falls behind costs reads, not memory: what it has not had yet waits in memory
 * up to {@link MAX_QUEUED} records; past that its queue is dropped and it reads the rest from
 * the log, from where it is, before it listens again.
 *
 * @module
 */
import { ClosedError, type LedgerError } from '../errors.js';
import type { Position } from '../log.js';
import type { Counts, Record } from './record.js';

/** The most records, by default, a live consumer that falls behind is kept in memory. */
export const MAX_QUEUED = 10_000;

/** How many handed-out records a consumer's queue holds at most before it lets go of them. */
const RELEASE_EVERY = 1024;

/** A record as a live consumer sees it: with its position in the log. */
export interface LogEntry {
  readonly position: Position;
  readonly record: Record;
}

/** What the live consumers ask of their ledger. */
export interface Source {
  readonly name: string;
  /** The records `[from, to)` as the log holds them. */
  read(from: Position, to: Position): AsyncIterable<Record>;
  /** The head the state reflects. */
  applied(): Position;
  counts(): Promise<Counts>;
  /** Whether `close` was called. */
  closed(): boolean;
  /** The failure that stopped the ledger (live consumers end with it), or `null`. */
  failure(): LedgerError | null;
  /** Starts hearing of other writers' appends, where the log can tell of them. */
  listen(): void;
}

/** The live consumers of one ledger. */
export class Live {
  /** Told of each batch the state takes in. */
  private readonly listeners = new Set<(from: Position, records: readonly Record[]) => void>();
  /** The resolvers of waits that a close (or a stopped ledger) must end. */
  private readonly wakers = new Set<() => void>();
  /** Set once `close` has written what was queued: live consumers end when they have it all. */
  private ended = false;

  /**
   * @param maxQueued the most records a consumer that falls behind is kept in memory; past them,
   *   it reads what it has not had from the log
   */
  constructor(
    private readonly source: Source,
    private readonly maxQueued = MAX_QUEUED,
  ) {}

  /** Tells every consumer of records the state took in, the first at `from`. */
  tell(from: Position, records: readonly Record[]): void {
    for (const listener of this.listeners) listener(from, records);
  }

  /** Wakes every wait: the ledger stopped, and each consumer ends with the failure. */
  wake(): void {
    for (const wake of [...this.wakers]) wake();
  }

  /** Ends every consumer, once it has every record told so far. */
  end(): void {
    this.ended = true;
    this.wake();
    this.wakers.clear();
  }

  /**
   * See `HonchoLedger.follow`.
   * @throws RangeError when `from` is not a whole number of at least 0
   */
  async *follow(from: Position, signal?: AbortSignal): AsyncIterable<LogEntry> {
    if (!Number.isSafeInteger(from) || from < 0)
      throw new RangeError(`follow: from must be a whole number of at least 0 (a position), not ${from}`);
    // What is taken in while the consumer works waits here, up to a bound; past it the queue is
    // dropped and the rest read from the log, so that a consumer that falls behind costs reads,
    // not memory.
    const queued: LogEntry[] = [];
    let taken = 0; // the entries of `queued` before it were handed out
    let behind = false; // the queue overflowed: the records from `next` on are read from the log
    let wake: (() => void) | null = null;
    const listener = (first: Position, records: readonly Record[]): void => {
      if (!behind && queued.length - taken + records.length > this.maxQueued) {
        behind = true;
        queued.length = 0;
        taken = 0;
      }
      if (!behind)
        for (let n = 0; n < records.length; n++) queued.push({ position: first + n, record: records[n] as Record });
      wake?.();
    };
    const stop = (): void => wake?.();
    // Listening first, then reading what the state holds: nothing taken in between is missed,
    // and what both give is told once (by position).
    this.listeners.add(listener);
    signal?.addEventListener('abort', stop);
    this.source.listen();
    try {
      let next = from;
      for await (const entry of this.logged(next, signal)) {
        next = entry.position + 1;
        yield entry;
      }
      for (;;) {
        while (taken < queued.length && !behind) {
          const entry = queued[taken++] as LogEntry;
          // what was handed out is let go of, in steps, even when the queue is never empty
          if (taken === queued.length || taken >= RELEASE_EVERY) {
            queued.splice(0, taken);
            taken = 0;
          }
          if (entry.position < next) continue;
          next = entry.position + 1;
          yield entry;
        }
        if (behind) {
          // a close ends a consumer that fell behind where it is: the log it would read is closed
          if (this.ended) return;
          behind = false;
          for await (const entry of this.logged(next, signal)) {
            next = entry.position + 1;
            yield entry;
          }
          continue;
        }
        if (this.ended || signal?.aborted === true) return;
        const failure = this.source.failure();
        if (failure !== null) throw failure;
        await new Promise<void>((resolve) => {
          const done = (): void => {
            this.wakers.delete(done);
            wake = null;
            resolve();
          };
          wake = done;
          this.wakers.add(done);
        });
      }
    } finally {
      this.listeners.delete(listener);
      signal?.removeEventListener('abort', stop);
    }
  }

  /**
   * The records from `from` up to the state's head, as the log holds them, until `signal` aborts
   * (a backlog may be long: an abort ends it at once, where what was queued is still handed out).
   */
  private async *logged(from: Position, signal: AbortSignal | undefined): AsyncIterable<LogEntry> {
    let position = from;
    for await (const record of this.source.read(from, this.source.applied())) {
      if (signal?.aborted === true) return;
      yield { position: position++, record };
    }
  }

  /** See `HonchoLedger.waitForOutbox`. */
  async waitForOutbox(signal?: AbortSignal): Promise<void> {
    this.source.listen();
    for (;;) {
      if (this.source.closed()) throw new ClosedError(this.source.name);
      const failure = this.source.failure();
      if (failure !== null) throw failure;
      signal?.throwIfAborted();
      // listening before looking: an item that arrives while the counts are read wakes the wait
      let woken = false;
      let wake = (): void => {
        woken = true;
      };
      const done = (): void => {
        this.listeners.delete(listener);
        this.wakers.delete(done);
        signal?.removeEventListener('abort', done);
        wake();
      };
      const listener = (_: Position, records: readonly Record[]): void => {
        if (records.some((r) => r.type === 'decided' && r.action.type !== 'skip')) done();
      };
      this.listeners.add(listener);
      this.wakers.add(done);
      signal?.addEventListener('abort', done);
      let waiting: number;
      try {
        ({ waiting } = await this.source.counts());
      } catch (e) {
        done();
        throw e;
      }
      if (waiting > 0) {
        done();
        return;
      }
      if (!woken) await new Promise<void>((resolve) => (wake = resolve));
    }
  }
}
