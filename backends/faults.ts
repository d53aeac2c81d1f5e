/**
 * A fault-injecting wrapper around any backend, for tests of what sits on a log (memoryd, the
 * `Ledger`): it fails chosen appends, fails them at random, delays them, and simulates a
 * crash, deterministically from a plan and its seeds.
 *
 * ```ts
 * const backend = faultyBackend(memoryBackend({ codec: honchoCodec }), {
 *   failAppends: [{ at: 3, when: 'after' }],
 * });
 * const ledger = await Ledger.open(backend);
 * ```
 *
 * How appends go through it:
 *
 * - **Numbering.** Every call of `append` on a log opened through the backend gets the next
 *   number, from 1, whatever its outcome, across reopens: the plan's faults name appends by it.
 *   Through a `Ledger`, one number is one batch of its group commit (one record when each
 *   append is awaited before the next is made).
 * - **One at a time, in call order.** An append waits for its delay (which starts when it is
 *   called) and for the append before it to settle; then its fault, if any, is applied and it is
 *   handed to the inner log. Without a delay an idle log hands it over at once, so that an empty
 *   plan is transparent.
 * - **Failures** are {@link LedgerIoError}s whose cause is an {@link InjectedFault} (an `Error`
 *   with a system error `code`, `EIO` by default), so that callers exercise the error handling
 *   that a real disk failure would reach; {@link injectedFault} tells them apart in tests.
 * - **Failed before the write**: the inner log is not called and nothing is written; the log
 *   goes on (as a JSONL log does after a failed write it could cut back).
 * - **Failed after the write**: the inner append succeeded, its records are in the log (`head`
 *   and `read` show them, and so does a reopen), but the caller is told it failed: an
 *   acknowledgement lost to a crash or a timeout. The writer no longer knows where the log
 *   ends, so the log **stops**: every later append is refused with {@link StoppedError} until
 *   the log is closed and opened again, exactly as a JSONL log does after a failed `fdatasync`.
 * - **Crash** (`backend.crash()`): every append still waiting in the wrapper (delayed, or queued
 *   behind another) is lost: it never reaches the inner log and rejects with an injected
 *   `ECANCELED` failure. An append already handed to the inner log settles as the inner log
 *   says. Every log of the backend is then closed (later calls: {@link ClosedError}) and the
 *   inner logs with them, so that the backend can be opened again. An append whose promise
 *   resolved is in the reopened log; one lost in the crash is not.
 *
 * @module
 */
import { LedgerIoError } from '../lib/errors.js';
import type {
  Appendable,
  Appended,
  AppendOptions,
  EventLog,
  HeadWatcher,
  Lease,
  LogBackend,
  LogCapabilities,
  OpenOptions,
  Position,
  Repair,
  ResumePoint,
  Unwatch,
} from '../lib/log.js';
import { LogBase } from '../lib/log-base.js';
import { Random } from '../lib/random.js';

/**
 * When an injected failure strikes an append: `'before'` the inner log is called (nothing is
 * written; the log goes on), or `'after'` the inner append succeeded (the records are in the log,
 * the caller is told otherwise, and the log stops until it is reopened).
 */
export type FaultTiming = 'before' | 'after';

/** One append to fail. */
export interface AppendFault {
  /** The append's number: among every `append` called on the backend's logs, from 1. */
  readonly at: number;
  /** Before or after the write; see {@link FaultTiming}. */
  readonly when: FaultTiming;
  /** The system error code the failure carries. Default `EIO`. */
  readonly code?: string;
}

/** Appends that fail at random, each with the same chance. */
export interface RandomFaults {
  /** The chance that an append fails, from 0 (never) to 1 (always). */
  readonly probability: number;
  /** The generator's seed: the same seed and the same calls fail the same appends. */
  readonly seed: number;
  /** Before or after the write. Default `'before'`. */
  readonly when?: FaultTiming;
}

/** A delay drawn for each append, in whole milliseconds from `min` to `max` inclusive. */
export interface RandomDelay {
  readonly min: number;
  readonly max: number;
  /** The generator's seed (its own: delays do not change which appends fail at random). */
  readonly seed: number;
}

/**
 * How long each append waits in the wrapper before it is handed to the inner log: a fixed
 * number of milliseconds, a seeded random one, or one chosen per append by its number (to hold
 * some appends back, for a crash to catch them).
 */
export type AppendDelay = number | RandomDelay | ((append: number) => number);

/**
 * What to do to the appends. Every field is optional; an empty plan changes nothing. When more
 * than one fault would strike an append, `failAppends` wins over `failAppendsAfter`, which wins
 * over `failRandomly`.
 */
export interface FaultPlan {
  /** Appends that fail, each once, by number. */
  readonly failAppends?: readonly AppendFault[];
  /**
   * Every append numbered above this fails, before the write, with `ENOSPC`: a disk that filled
   * up and stays full, across reopens. `0` fails them all.
   */
  readonly failAppendsAfter?: number;
  /** Appends that fail at random, from a seeded generator. */
  readonly failRandomly?: RandomFaults;
  /** How long appends wait before they reach the inner log; they still land in call order. */
  readonly delay?: AppendDelay;
}

/** What an injected failure was: failed before or after the write, or lost in a crash. */
export type FaultKind = FaultTiming | 'crash';

/**
 * The cause of every injected failure: an `Error` that looks like a system error (it has a
 * `code`), so that `LedgerIoError` reports it as it would a disk's, and that says it was injected.
 */
export class InjectedFault extends Error {
  /**
   * @param kind before or after the write, or lost in a crash
   * @param append the append's number
   * @param code the system error code (`EIO`, `ENOSPC`, `ECANCELED`)
   */
  constructor(
    readonly kind: FaultKind,
    readonly append: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'InjectedFault';
  }
}

/**
 * The injected fault behind `error`, when `error` is an injected failure of an append; otherwise
 * `undefined` (a real error, or a {@link StoppedError} that an earlier injected failure caused).
 */
export function injectedFault(error: unknown): InjectedFault | undefined {
  return error instanceof LedgerIoError && error.cause instanceof InjectedFault ? error.cause : undefined;
}

/** What a faulty backend's logs did with their appends so far. */
export interface FaultStats {
  /** Calls of `append`: the number the last one got. */
  readonly attempted: number;
  /** Appends that resolved. */
  readonly acknowledged: number;
  /** Appends that rejected, for any reason: injected, lost, stopped, closed, or the inner log's own. */
  readonly rejected: number;
  /** Appends still waiting or with the inner log. */
  readonly pending: number;
  /** Appends failed before the write by the plan. */
  readonly failedBefore: number;
  /** Appends failed after the write by the plan: their records are in the log. */
  readonly failedAfter: number;
  /** Appends lost in a crash. */
  readonly lost: number;
  /** Calls of `crash`. */
  readonly crashes: number;
}

/** A backend wrapped in a {@link FaultPlan}. */
export interface FaultyBackend<R> extends LogBackend<R> {
  /** The counts so far, as a snapshot. */
  readonly stats: FaultStats;
  /** Every failure injected so far, in the order they struck. */
  readonly injected: readonly InjectedFault[];
  /**
   * Simulates a crash of the process: the appends not yet handed to the inner log are lost,
   * every log open through this backend is closed, and the promise resolves once the inner logs
   * are closed too, after which the backend can be opened again.
   */
  crash(): Promise<void>;
}

/**
 * Wraps `inner` so that its appends fail, wait or get lost as `plan` says. The backend keeps
 * `inner`'s name and capabilities.
 * @throws RangeError when the plan does not make sense (an append numbered 0, a probability of 2)
 */
export function faultyBackend<R>(inner: LogBackend<R>, plan: FaultPlan = {}): FaultyBackend<R> {
  return new Backend(inner, new Faults(plan));
}

// -- the plan -----------------------------------------------------------------------------------

/** A fault the plan has for one append. */
interface Planned {
  readonly when: FaultTiming;
  readonly code: string;
  /** Why, for the message: what part of the plan struck. */
  readonly why: string;
}

/** One call of `append`, with what the plan has for it. */
interface Call {
  readonly number: number;
  readonly fault: Planned | undefined;
  readonly delay: number;
}

/** A seeded draw in [0, 1): the same sequence for the same seed everywhere (`lib/random.ts`). */
function generator(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new RangeError(`fault plan: ${what}`);
}

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const isDelay = (n: number): boolean => Number.isFinite(n) && n >= 0;

/** The plan, checked, with its generators and counters: shared by every log of a backend. */
class Faults {
  private readonly planned = new Map<number, Planned>();
  private readonly failAfter: number | undefined;
  private readonly random:
    | { readonly probability: number; readonly when: FaultTiming; readonly seed: number; readonly draw: () => number }
    | undefined;
  private readonly delay: (append: number) => number;
  private calls = 0;
  readonly counts = { acknowledged: 0, rejected: 0, failedBefore: 0, failedAfter: 0, lost: 0, crashes: 0 };
  readonly injected: InjectedFault[] = [];

  constructor({ failAppends = [], failAppendsAfter, failRandomly, delay }: FaultPlan) {
    for (const { at, when, code = 'EIO' } of failAppends) {
      check(isCount(at) && at >= 1, `failAppends: an append's number is counted from 1, not ${at}`);
      check(when === 'before' || when === 'after', `failAppends: when is 'before' or 'after', not ${String(when)}`);
      check(!this.planned.has(at), `failAppends: append ${at} is named twice`);
      this.planned.set(at, { when, code, why: '' });
    }
    if (failAppendsAfter !== undefined)
      check(isCount(failAppendsAfter), `failAppendsAfter must be a count, not ${failAppendsAfter}`);
    this.failAfter = failAppendsAfter;
    if (failRandomly !== undefined) {
      const { probability, seed, when = 'before' } = failRandomly;
      check(probability >= 0 && probability <= 1, `failRandomly: probability is from 0 to 1, not ${probability}`);
      check(Number.isFinite(seed), `failRandomly: the seed must be a number, not ${seed}`);
      check(when === 'before' || when === 'after', `failRandomly: when is 'before' or 'after', not ${String(when)}`);
      this.random = { probability, when, seed, draw: generator(seed) };
    }
    this.delay = Faults.delays(delay);
  }

  private static delays(delay: AppendDelay | undefined): (append: number) => number {
    if (delay === undefined) return () => 0;
    if (typeof delay === 'number') {
      check(isDelay(delay), `delay must be a number of milliseconds, not ${delay}`);
      return () => delay;
    }
    if (typeof delay === 'function') {
      return (append) => {
        const ms = delay(append);
        check(isDelay(ms), `delay for append ${append} must be a number of milliseconds, not ${ms}`);
        return ms;
      };
    }
    const { min, max, seed } = delay;
    check(
      isCount(min) && isCount(max) && min <= max,
      `delay: min and max are whole milliseconds, min <= max, not ${min} and ${max}`,
    );
    check(Number.isFinite(seed), `delay: the seed must be a number, not ${seed}`);
    const draw = generator(seed);
    return () => min + Math.floor(draw() * (max - min + 1));
  }

  /**
   * Numbers a call of `append` and decides its fate. Each generator is drawn from once a call,
   * whatever else strikes it, so that the same calls always get the same fates.
   */
  next(): Call {
    const number = ++this.calls;
    const roll = this.random?.draw();
    const delay = this.delay(number);
    let fault = this.planned.get(number);
    if (fault === undefined && this.failAfter !== undefined && number > this.failAfter) {
      fault = { when: 'before', code: 'ENOSPC', why: `: every append after ${this.failAfter} fails` };
    }
    if (fault === undefined && this.random !== undefined && roll !== undefined && roll < this.random.probability) {
      fault = { when: this.random.when, code: 'EIO', why: `, at random (seed ${this.random.seed})` };
    }
    return { number, fault, delay };
  }

  /** The error for an injected failure of append `number`: the plan's `fault` struck it, or a crash lost it. Counted. */
  inject(name: string, number: number, fault: Planned | 'crash'): LedgerIoError {
    let cause: InjectedFault;
    if (fault === 'crash') {
      this.counts.lost++;
      cause = new InjectedFault(
        fault,
        number,
        'ECANCELED',
        `injected crash: append ${number} was lost before it reached the log`,
      );
    } else {
      if (fault.when === 'before') this.counts.failedBefore++;
      else this.counts.failedAfter++;
      const what =
        fault.when === 'before'
          ? 'before the write'
          : 'after the write: its records are in the log, but the acknowledgement was lost';
      cause = new InjectedFault(
        fault.when,
        number,
        fault.code,
        `injected fault: append ${number} failed ${what}${fault.why}`,
      );
    }
    this.injected.push(cause);
    return new LedgerIoError(name, cause);
  }

  stats(): FaultStats {
    const { acknowledged, rejected } = this.counts;
    return { attempted: this.calls, pending: this.calls - acknowledged - rejected, ...this.counts };
  }
}

// -- the backend and its logs -------------------------------------------------------------------

class Backend<R> implements FaultyBackend<R> {
  private readonly openLogs = new Set<FaultyLog<R>>();

  constructor(
    private readonly inner: LogBackend<R>,
    private readonly faults: Faults,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): LogCapabilities {
    return this.inner.capabilities;
  }

  get stats(): FaultStats {
    return this.faults.stats();
  }

  get injected(): readonly InjectedFault[] {
    return [...this.faults.injected];
  }

  async open(options?: OpenOptions<R>): Promise<EventLog<R>> {
    const log = new FaultyLog(
      await this.inner.open(options),
      this.faults,
      () => this.openLogs.delete(log),
      options?.readOnly ?? false,
    );
    this.openLogs.add(log);
    return log;
  }

  async crash(): Promise<void> {
    this.faults.counts.crashes++;
    await Promise.all([...this.openLogs].map((log) => log.crash()));
  }
}

/** An append's delay: it starts when the append is called, and a crash ends it at once. */
class Delay {
  readonly over: Promise<void>;
  private finish: () => void = () => undefined;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(ms: number) {
    this.over = new Promise((resolve) => {
      this.finish = resolve;
    });
    this.timer = setTimeout(() => this.end(), ms);
  }

  end(): void {
    clearTimeout(this.timer);
    this.finish();
  }
}

/**
 * The wrapper's log: the base's guards, call order, closed reads and close, around the inner
 * log, which checks the records, the expected head and the empty batch in its turn.
 */
class FaultyLog<R> extends LogBase<R> {
  /** Set by a crash: appends not yet handed to the inner log are lost. */
  private crashed = false;
  /** The delays still running. */
  private readonly delays = new Set<Delay>();

  constructor(
    private readonly inner: EventLog<R>,
    private readonly faults: Faults,
    private readonly onClosed: () => void,
    readOnly: boolean,
  ) {
    super({ name: inner.name, capabilities: inner.capabilities, readOnly });
    const watch = inner.watch?.bind(inner);
    // the inner log's watch, when it has one: the wrapper injects no fault into what it hears
    if (watch !== undefined) this.watch = (watcher) => this.watching(watcher, watch);
  }

  readonly watch?: (watcher: HeadWatcher) => Promise<Unwatch>;

  get head(): Position {
    return this.inner.head;
  }

  get repaired(): Repair | null {
    return this.inner.repaired;
  }

  /** Numbered first, whatever its outcome; then the guards; then its turn, after its delay. */
  append(records: readonly Appendable<R>[], options?: AppendOptions): Promise<Appended<R>> {
    let call: Call;
    try {
      call = this.faults.next();
      this.assertAppendable();
    } catch (e) {
      this.faults.counts.rejected++;
      return Promise.reject(e);
    }
    const delay = call.delay > 0 ? new Delay(call.delay) : null;
    if (delay !== null) this.delays.add(delay);
    // A copy, so that a caller who reuses its array while this one waits does not change it.
    const copy = records.slice();
    return this.inTurn(() => this.perform(call, delay, copy, options)).then(
      (appended) => {
        this.faults.counts.acknowledged++;
        return appended;
      },
      (e: unknown) => {
        this.faults.counts.rejected++;
        throw e;
      },
    );
  }

  /** One append's turn: its delay, then lost in a crash, stopped, or its fault around the inner append. */
  private async perform(
    call: Call,
    delay: Delay | null,
    records: readonly Appendable<R>[],
    options: AppendOptions | undefined,
  ): Promise<Appended<R>> {
    if (delay !== null) {
      await delay.over;
      this.delays.delete(delay);
    }
    if (this.crashed) throw this.faults.inject(this.name, call.number, 'crash');
    this.assertRunning();
    const { fault } = call;
    if (fault?.when === 'before') throw this.faults.inject(this.name, call.number, fault);
    // Called before the first await: with no delay and nothing waiting, the inner append
    // starts within the caller's own call, as it would without the wrapper.
    const appended = await this.inner.append(records, options);
    if (fault?.when === 'after') {
      const failure = this.faults.inject(this.name, call.number, fault);
      this.stop(failure);
      throw failure;
    }
    return appended;
  }

  protected async *_read(from: Position, to: Position | undefined): AsyncIterable<R[]> {
    for await (const record of this.inner.read(from, to)) yield [record];
  }

  protected _refresh(): Promise<Position> {
    return this.inner.refresh();
  }

  /** The inner log's lease: its storage keeps it. */
  protected override _lease(name: string): Promise<Lease | null> {
    return this.inner.lease(name);
  }

  /** The inner log's point, once every append called so far has settled. */
  protected _resumePoint(): Promise<ResumePoint> {
    return this.inner.resumePoint();
  }

  protected async _close(): Promise<void> {
    await this.inner.close();
    this.onClosed();
  }

  /** Loses every append still waiting in the wrapper (each fails in its turn, at once), then closes. */
  crash(): Promise<void> {
    this.crashed = true;
    for (const delay of this.delays) delay.end();
    return this.close();
  }
}
