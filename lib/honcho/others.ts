/**
 * What other writers append, as a Honcho ledger takes it in (`ledger.ts`, "Several writers"):
 * the catch-up, and the watch of the log that calls for one.
 *
 * - **The catch-up** moves the log to the store's head (`refresh`), then takes in the records
 *   from `applied` up to it a page at a time (at most {@link CATCH_UP_PAGE}, so that a catch-up
 *   of a log that grew by millions of records holds one page): checks each against the rules
 *   with the records before it applied, takes the page into the state, moves `applied`, and
 *   tells the live consumers. A record that breaks the rules is damage ({@link DamagedError} at
 *   its position): the pages before it were taken in, nothing from its page on is.
 * - **Records a keyed append went past** (`ledger.ts`) are checked the same way
 *   ({@link Others.checkPassed}) before the state takes them in with the append's own.
 * - **What stops the ledger**: that damage, and any failure that says the log or the state
 *   cannot be trusted any more (code `LEDGER_STOPPED` or `LEDGER_DAMAGED`, from the log or the
 *   state alike: a log that went back, a read model found damaged, a state that could not take
 *   the records in), and a watch that cannot follow the log any more. The ledger is told once,
 *   and every later catch-up fails with it.
 * - **A passing failure** (a lost connection) takes in nothing more; a catch-up the watch
 *   called for is tried again after a pause that doubles up to {@link MAX_RETRY_MS}.
 * - **The watch** starts with the first live consumer, and each head it tells of past what
 *   was heard is a catch-up due; one that cannot start is tried again after such a pause. The
 *   watch and the catch-up each keep their own pause: one failing never holds the other back.
 *
 * @module
 */
import { DamagedError, IndexBehindError, isLedgerError, type LedgerError } from '../errors.js';
import type { EventLog, Position, Unwatch } from '../log.js';
import { ItemMap } from './item-map.js';
import type { Record } from './record.js';
import { type ItemState, refusal, stateAfter } from './rules.js';
import type { LedgerState } from './state.js';

/** The first pause before a failed catch-up (or watch) is tried again, doubled each time up to {@link MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 100;
/** The longest pause before a failed catch-up (or watch) is tried again. */
export const MAX_RETRY_MS = 5000;
/** The most records a catch-up holds at once: it takes in a longer run of others' records a page at a time. */
export const CATCH_UP_PAGE = 4096;

/** What the catch-up works on, and whom it tells. */
export interface Catching {
  /** The ledger's name, for messages. */
  readonly name: string;
  readonly log: Pick<EventLog<Record>, 'head' | 'refresh' | 'read' | 'watch' | 'resumePoint'>;
  readonly state: Pick<LedgerState, 'statesOf' | 'apply'>;
  /** Told of the records taken in, the first at `from` (the live consumers). */
  readonly told: (from: Position, records: readonly Record[]) => void;
  /** Told once, of the failure that stops the ledger. */
  readonly stopped: (failure: LedgerError) => void;
  /** Runs the ledger's flush, which makes the catch-ups that are due ({@link Others.due}). */
  readonly kick: () => void;
}

/** Whether a failure of the log or the state means that the ledger cannot go on until a reopen. */
function stopsTheLedger(e: unknown): e is LedgerError {
  return isLedgerError(e, 'LEDGER_STOPPED') || isLedgerError(e, 'LEDGER_DAMAGED');
}

/**
 * A step tried again after a pause once it failed: the pause doubles with each failure in a row,
 * up to {@link MAX_RETRY_MS}, and starts again from the first once the step succeeds.
 */
class Retry {
  private timer: NodeJS.Timeout | null = null;
  private pauseMs = FIRST_RETRY_MS;
  private stopped = false;

  constructor(private readonly again: () => void) {}

  /** Whether a pause is running: the step waits for it. */
  get waiting(): boolean {
    return this.timer !== null;
  }

  /** The step failed: it runs again after the pause (once, however often it failed meanwhile). */
  failed(): void {
    if (this.timer !== null || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.again();
    }, this.pauseMs);
    this.pauseMs = Math.min(2 * this.pauseMs, MAX_RETRY_MS);
  }

  /** The step succeeded: the next failure waits the first pause. */
  succeeded(): void {
    this.pauseMs = FIRST_RETRY_MS;
  }

  /** No more tries. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Where a ledger is in the log, and how it catches up with what others appended. */
export class Others {
  /** The head the state reflects: every record below it is in the state. */
  private appliedHead: Position;
  /** The highest head a watch told of: above `applied`, a catch-up is due. */
  private heard: Position;
  /** Catch-ups asked for ({@link Others.ask}), settled by the next one. */
  private readonly asked: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  /** The watch of the log, once started; `null` before (or while it is to be tried again). */
  private watch: Promise<Unwatch | null> | null = null;
  /** A catch-up the watch called for, after one that failed. */
  private readonly catchUpRetry = new Retry(() => this.on.kick());
  /** The watch's start, after one that failed. */
  private readonly watchRetry = new Retry(() => this.listen());
  /** The failure that stopped the ledger: the first one told ({@link Others.stop}). */
  private stoppingFailure: LedgerError | null = null;
  private closed = false;

  constructor(private readonly on: Catching) {
    this.appliedHead = on.log.head;
    this.heard = on.log.head;
  }

  /** The head the state reflects. */
  get applied(): Position {
    return this.appliedHead;
  }

  /** The failure that stopped the ledger, or `null`. */
  get failure(): LedgerError | null {
    return this.stoppingFailure;
  }

  /** The ledger's own append reached `head`, and the state took it in. */
  advanced(head: Position): void {
    this.appliedHead = head;
  }

  /** Whether a catch-up is to be made now: asked for, or a head heard past the state. */
  due(): boolean {
    if (this.asked.length > 0) return true;
    return this.heard > this.appliedHead && this.stoppingFailure === null && !this.catchUpRetry.waiting && !this.closed;
  }

  /**
   * A catch-up when the ledger's flush finds one due: those who asked for it hear how it went;
   * a passing failure is tried again later. Never rejects.
   */
  async runDue(): Promise<void> {
    const asked = this.asked.splice(0);
    try {
      await this.catchUp();
      this.catchUpRetry.succeeded();
      for (const { resolve } of asked) resolve();
    } catch (e) {
      for (const { reject } of asked) reject(e);
      if (this.stoppingFailure === null) this.catchUpRetry.failed();
    }
  }

  /** A catch-up, made by the ledger's flush: resolves once it is made. */
  ask(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.asked.push({ resolve, reject });
      this.on.kick();
    });
  }

  /**
   * The catch-up (see the module's comment), run by the ledger's flush, between its writes.
   * @throws a passing failure of the log or the state: nothing more was taken in
   * @throws the failure that stopped the ledger
   */
  async catchUp(): Promise<void> {
    if (this.stoppingFailure !== null) throw this.stoppingFailure;
    try {
      const head = await this.on.log.refresh();
      this.heard = Math.max(this.heard, head);
      while (this.appliedHead < head) await this.takePage(Math.min(head, this.appliedHead + CATCH_UP_PAGE));
    } catch (e) {
      if (stopsTheLedger(e)) throw this.stop(e);
      throw e;
    }
  }

  /** Takes in the records from `applied` up to `to`, or none of them. */
  private async takePage(to: Position): Promise<void> {
    const { log, state, name } = this.on;
    const from = this.appliedHead;
    const records: Record[] = [];
    for await (const record of log.read(from, to)) records.push(record);
    if (records.length < to - from)
      throw new DamagedError(name, from + records.length + 1, `the log's head is ${to}, but it ends before`);
    await this.check(from, records);
    try {
      await state.apply(records, () => log.resumePoint());
    } catch (e) {
      throw new IndexBehindError(name, e instanceof Error ? e : new Error(String(e)));
    }
    this.appliedHead = to;
    this.on.told(from, records);
  }

  /**
   * Checks others' records, the first at `from` (the state's head), against the rules with the
   * records before them applied.
   * @throws {@link DamagedError} at the first that breaks them
   */
  private async check(from: Position, records: readonly Record[]): Promise<void> {
    const states = await this.on.state.statesOf(records.map((r) => r.item));
    const staged = new ItemMap<ItemState>();
    records.forEach((record, n) => {
      const refused = refusal(record, staged.get(record.item) ?? states[n]);
      if (refused !== null) throw new DamagedError(this.on.name, from + n + 1, refused.message, { cause: refused });
      staged.set(record.item, stateAfter(record));
    });
  }

  /**
   * The ledger's keyed append landed at `from`, past `passed`, others' records at `applied` (none
   * of the append's items: the log saw to it): checks them as a catch-up does, before the state
   * takes them in with the append's own. Fewer than `from - applied` are those before one the
   * log could not read (it has stopped, with that damage): the ledger stops at it.
   * @throws the failure that stopped the ledger: {@link DamagedError} at the first that breaks
   *   the rules, or at the first the log could not read
   */
  async checkPassed(passed: readonly Record[], from: Position): Promise<void> {
    try {
      await this.check(this.appliedHead, passed);
      const unread = this.appliedHead + passed.length;
      if (unread < from)
        throw new DamagedError(
          this.on.name,
          unread + 1,
          `record ${unread + 1}, another writer's, which this ledger's append (committed at ${from + 1}) went past, could not be read; reopen the ledger to see what the log holds`,
        );
    } catch (e) {
      if (stopsTheLedger(e)) throw this.stop(e);
      throw e;
    }
  }

  /** Stops the ledger with `failure` (the first one told); gives the failure that stopped it. */
  stop(failure: LedgerError): LedgerError {
    if (this.stoppingFailure === null) {
      this.stoppingFailure = failure;
      this.on.stopped(failure);
    }
    return this.stoppingFailure;
  }

  /** Starts, once, the watch of the log, where it has one: each head it tells of past what was heard is a catch-up due. */
  listen(): void {
    const { log } = this.on;
    const watch = log.watch?.bind(log);
    if (watch === undefined || this.watch !== null || this.closed || this.stoppingFailure !== null) return;
    this.watch = watch({
      onHead: (head) => {
        if (head <= this.heard) return;
        this.heard = head;
        this.on.kick();
      },
      onFailure: (failure) => {
        this.stop(failure);
      },
    }).then(
      (unwatch) => {
        this.watchRetry.succeeded();
        return unwatch;
      },
      () => {
        this.watch = null;
        this.watchRetry.failed();
        return null;
      },
    );
  }

  /** No catch-up is due from now on; the watch is stopped. */
  async close(): Promise<void> {
    this.closed = true;
    this.catchUpRetry.stop();
    this.watchRetry.stop();
    const unwatch = await this.watch;
    await unwatch?.().catch(() => undefined);
  }
}
