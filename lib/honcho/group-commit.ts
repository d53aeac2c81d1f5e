/**
 * The ledger's group commit: appends queue in call order, and one write at a time takes as many
 * as are waiting (up to {@link MAX_BATCH}), each checked against the state with the batch's
 * earlier records applied, so that concurrent appenders share one durable write (one fsync, one
 * commit) while every rule holds. A batch the log refuses for a moved head goes back to the
 * front of the queue once what other writers appended is taken in (`others.ts`).
 *
 * @module
 */
import { ConflictError, IndexBehindError, isLedgerError, type LedgerError } from '../errors.js';
import type { CheckedRecord, EventLog, Position, ResumePoint } from '../log.js';
import { LogBase } from '../log-base.js';
import { BatchItems } from './batch-items.js';
import type { Live } from './live.js';
import type { Others } from './others.js';
import { type Item, itemKey, type Record } from './record.js';
import { type ItemState, refusal, stateAfter } from './rules.js';
import type { LedgerState } from './state.js';

/** The most records one write carries. */
const MAX_BATCH = 1024;
interface Pending {
  /** Checked by the codec when `append` was called: the log takes it without a second check. */
  readonly checked: CheckedRecord<Record>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

const settleNothing = (): void => undefined;
/** An append's `passed` when it went past none. */
const NO_RECORDS: readonly Record[] = [];

/** Stands in the queue, until the batch is taken, for an append the rules refused (and rejected). */
const REFUSED: Pending = {
  checked: undefined as unknown as CheckedRecord<Record>,
  resolve: settleNothing,
  reject: settleNothing,
};

/** What a group commit works with: the ledger's log and state, and its catch-up and live consumers. */
export interface GroupCommitParts {
  readonly log: EventLog<Record>;
  readonly state: LedgerState;
  readonly others: Others;
  readonly live: Live;
}

/** The queue of a ledger's appends and the flush that writes them, a batch at a time. */
export class GroupCommit {
  private readonly queue: Pending[] = [];
  /** The items of the batch being taken, kept from one batch to the next. */
  private readonly batchItems = new BatchItems();
  private flushing: Promise<void> | null = null;
  private readonly log: EventLog<Record>;
  private readonly state: LedgerState;
  private readonly others: Others;
  private readonly live: Live;
  /**
   * Whether the log takes the queue's {@link CheckedRecord}s as they are: a {@link LogBase}'s
   * `append` does (it writes a line its own codec checked without checking it again). Any other
   * {@link EventLog}, a caller's own or a wrapper written against `append(records: R[])`, is
   * given the records themselves: a parameter's type is checked both ways by TypeScript, so
   * such a log compiles, and it would have been handed wrappers in place of records.
   */
  private readonly takesChecked: boolean;

  constructor({ log, state, others, live }: GroupCommitParts) {
    this.log = log;
    this.state = state;
    this.others = others;
    this.live = live;
    this.takesChecked = log instanceof LogBase;
  }

  /** Queues `checked` and resolves once it is durable and in the state; rejects with why not. */
  push(checked: CheckedRecord<Record>): Promise<void> {
    const appended = new Promise<void>(this.takeSettlers);
    this.queue.push({ checked, resolve: this.resolveNext, reject: this.rejectNext });
    this.kick();
    return appended;
  }

  /** Resolves once the flush running now (if any) has settled every append it took. */
  async settled(): Promise<void> {
    await this.flushing;
  }

  /** The log's point at its head, for a state that keeps one: one function, not a closure a batch. */
  private readonly resumePoint = (): Promise<ResumePoint> => this.log.resumePoint();

  /** What the last promise `append` made settles by, left by {@link GroupCommit.takeSettlers}. */
  private resolveNext: () => void = settleNothing;
  private rejectNext: (error: unknown) => void = settleNothing;
  /** The executor of every append's promise: one function, not a closure an append. */
  private readonly takeSettlers = (resolve: () => void, reject: (error: unknown) => void): void => {
    this.resolveNext = resolve;
    this.rejectNext = reject;
  };

  /** Starts the flush if none is running. */
  kick(): void {
    this.flushing ??= Promise.resolve().then(() => this.flush());
  }

  /**
   * Catches up when one is due (before a write, which would otherwise meet a conflict), and
   * writes what is queued, a batch at a time, until nothing is left to do. Every queued append
   * is settled, whatever fails: a flush never rejects, so that `close` always gets to close.
   */
  private async flush(): Promise<void> {
    // What is left to do is looked at and `flushing` cleared in one step, with no await between
    // them: an append made in between would find a flush running and wait for one that has ended.
    while (this.queue.length > 0 || this.others.due()) {
      try {
        if (this.others.due()) await this.others.runDue();
        else await this.flushBatch();
      } catch (e) {
        // not expected (each step handles its failures); should one escape, no append waits forever
        for (const pending of this.queue.splice(0)) pending.reject(e);
      }
    }
    this.flushing = null;
  }

  /** Takes the next batch from the queue, writes it, and takes it into the state. */
  private async flushBatch(): Promise<void> {
    if (this.others.failure !== null) {
      // the state is behind the log: nothing queued can be checked against it
      for (const pending of this.queue.splice(0)) pending.reject(this.others.failure);
      return;
    }
    let batch: Pending[];
    try {
      const taking = this.takeBatch();
      batch = taking instanceof Promise ? await taking : taking;
    } catch (e) {
      // A read model found damaged stops the ledger, and its live consumers end with it, as a
      // catch-up that finds it does (others.ts). Any other failure to read the state (a read
      // model's failed write is reported by its next read) refuses the records it was to
      // check; the next are tried again.
      if (isLedgerError(e, 'LEDGER_STOPPED') || isLedgerError(e, 'LEDGER_DAMAGED')) this.others.stop(e);
      for (const pending of this.queue.splice(0, MAX_BATCH)) pending.reject(e);
      return;
    }
    if (batch.length === 0) return;
    const checked = new Array<CheckedRecord<Record>>(batch.length);
    const records = new Array<Record>(batch.length);
    for (let n = 0; n < batch.length; n++) {
      const c = (batch[n] as Pending).checked;
      checked[n] = c;
      records[n] = c.record;
    }
    const applied = this.others.applied;
    let from: Position;
    let passed: readonly Record[];
    try {
      // checked once, by `append`: the log takes them as they are. The rules look at one item
      // at a time, so a batch checked at `applied` still holds after records of other items:
      // with its items as keys, a log that can goes past those.
      ({ from, passed = NO_RECORDS } = await this.log.append(this.takesChecked ? checked : records, {
        expectedHead: applied,
        keys: this.log.capabilities.keyedAppends === true ? records.map((r) => itemKey(r.item)) : undefined,
      }));
    } catch (e) {
      if (e instanceof ConflictError) {
        await this.checkAgainAfterOthers(batch, e);
        return;
      }
      for (const pending of batch) pending.reject(e);
      return;
    }
    const taken = passed.length === 0 ? records : [...passed, ...records];
    let behind: LedgerError | null = null;
    try {
      if (from > applied) await this.others.checkPassed(passed, from);
      this.others.advanced(from + records.length);
      const applying = this.state.apply(taken, this.resumePoint);
      if (applying instanceof Promise) await applying;
    } catch (e) {
      // The records are in the log, durable: they are appended. But the state did not take
      // them in (nor others' records the append went past, if they break the rules), so it
      // cannot check the next ones: stop until a reopen catches it up.
      behind = isLedgerError(e, 'LEDGER_DAMAGED')
        ? e
        : new IndexBehindError(this.log.name, e instanceof Error ? e : new Error(String(e)));
    }
    for (let n = 0; n < batch.length; n++) (batch[n] as Pending).resolve();
    if (behind === null || this.others.applied > applied) this.live.tell(applied, taken);
    // after the consumers were told of the appended records, they end with the stop
    if (behind !== null) this.others.stop(behind);
  }

  /**
   * Another writer appended first: its records are taken in, and `batch` goes back to the front
   * of the queue, to be checked again against them. When the catch-up fails, or finds nothing
   * to take in (the conflict is not one a catch-up resolves), the batch is refused.
   */
  private async checkAgainAfterOthers(batch: readonly Pending[], conflict: ConflictError): Promise<void> {
    const before = this.others.applied;
    try {
      await this.others.catchUp();
    } catch (e) {
      for (const pending of batch) pending.reject(e);
      return;
    }
    if (this.others.applied === before) {
      for (const pending of batch) pending.reject(conflict);
      return;
    }
    this.queue.unshift(...batch);
  }

  /**
   * Takes the next records in call order, checking each against the state with the batch's
   * earlier records applied: an accepted one joins the batch, a refused one is rejected at once.
   * A record refused only because of an earlier record of the batch, which may yet fail, ends
   * the batch: it is checked again once the batch has landed or failed. Within the call when the
   * state answers at once (in memory).
   */
  private takeBatch(): Pending[] | Promise<Pending[]> {
    const queue = this.queue;
    const end = Math.min(queue.length, MAX_BATCH);
    const items = new Array<Item>(end);
    for (let n = 0; n < end; n++) items[n] = (queue[n] as Pending).checked.record.item;
    // Only appends push to the queue, at its end, while the states are read: the first `end`
    // entries are still the ones looked up.
    const now = this.state.statesNow?.(items);
    return now !== undefined
      ? this.batchOf(now, end)
      : this.state.statesOf(items).then((states) => this.batchOf(states, end));
  }

  /** {@link GroupCommit.takeBatch} with the states of the queue's first `end` entries' items. */
  private batchOf(states: readonly (ItemState | undefined)[], end: number): Pending[] {
    const queue = this.queue;
    // where in the queue the batch's latest record of each item is, for a batch of two or more
    const items = end > 1 ? this.batchItems : null;
    let refusedAny = false;
    let taken = 0;
    try {
      for (; taken < end; taken++) {
        const pending = queue[taken] as Pending;
        const { record } = pending.checked;
        const earlier = items === null ? -1 : items.latest(record.item);
        const before = earlier < 0 ? undefined : stateAfter((queue[earlier] as Pending).checked.record);
        const refused = refusal(record, before ?? states[taken]);
        if (refused === null) {
          items?.add(record.item, taken);
          continue;
        }
        if (before !== undefined) break;
        pending.reject(refused);
        queue[taken] = REFUSED;
        refusedAny = true;
      }
    } finally {
      items?.clear();
    }
    const batch = queue.splice(0, taken);
    return refusedAny ? batch.filter((pending) => pending !== REFUSED) : batch;
  }
}
