/**
 * The in-memory backend: a log that lives in the backend object, for tests (memoryd's and ours).
 * It keeps every promise of `lib/log.ts` except durability, with no I/O at all:
 *
 * - **Reopen.** The records live in the backend, not in the open log: opening the same backend
 *   again gives the same log, with everything appended before (until the backend is dropped).
 * - **Checked, then stored frozen.** `append` passes every record through `codec.normalize`
 *   first; one that is not valid refuses the whole batch (`InvalidRecordError`, from the codec) and nothing
 *   is stored. The normalized records are deeply frozen and stored as they are: `read` and
 *   `replay` hand out those same frozen values, so no caller can change what the log holds.
 * - **Reading through.** `open` hands every record to `replay`, in order; a
 *   {@link RecordRefusedError} from it stops the open with a {@link DamagedError} at that record
 *   (counted from 1, as a line would be), and nothing is changed. `repaired` is always `null`:
 *   nothing is ever cut off.
 * - **One writer per backend object.** A second writable open is refused with
 *   {@link LockedError}; read-only opens are allowed while a writer holds the log, and see the
 *   log as it was when they opened (as a read-only JSONL open does).
 * - **Call order.** An append runs whole, synchronously, when it is called: appends land in call
 *   order and never interleave.
 *
 * Why frozen values rather than the codec's text: freezing a Honcho record is three
 * `Object.freeze` calls, while text would cost an `encode` on every append and a `decode` on every
 * record read or replayed, several times slower (see docs/testing.md for figures). Freezing is as
 * safe for records that are plain data (objects, arrays, strings, numbers, booleans, `null`),
 * which is what a codec that writes a record as one line of text holds; a codec whose records
 * hold a `Map` or a `Date` would need the text instead, since freezing does not reach inside them.
 *
 * @module
 */
import {
  ClosedError,
  asDamage,
  DamagedError,
  LockedError,
  ReadOnlyError,
  RecordRefusedError,
  ResumeMismatchError,
} from '../lib/errors.js';
import { assertExpectedHead } from '../lib/expected-head.js';
import { fingerprintOf } from '../lib/fingerprint.js';
import type {
  AppendOptions,
  Appended,
  EventLog,
  LogBackend,
  LogCapabilities,
  OpenOptions,
  Position,
  RecordCodec,
  ResumePoint,
} from '../lib/log.js';

/** How to make an in-memory log. */
export interface MemoryOptions<R> {
  /** Checks (and copies) the records appended; the log stores what `normalize` gives. */
  readonly codec: RecordCodec<R>;
  /** The log's name in messages. Default `memory:`. */
  readonly name?: string;
}

const CAPABILITIES: LogCapabilities = { durable: false, files: false, severalWriters: false, readsWhileWriting: true, atomicBatches: true };

/**
 * A new, empty in-memory log of records of type `R`. Every open of the returned backend sees
 * the same records.
 *
 * @example
 * ```ts
 * const backend = memoryBackend({ codec: honchoCodec });
 * const ledger = await Ledger.open(backend);
 * ```
 */
export function memoryBackend<R>(options: MemoryOptions<R>): LogBackend<R> {
  const store: Store<R> = { name: options.name ?? 'memory:', codec: options.codec, records: [], writer: null };
  return {
    name: store.name,
    capabilities: CAPABILITIES,
    open: (openOptions) => MemoryLog.open(store, openOptions ?? {}),
  };
}

/** What a backend object holds between opens: the records, and who is writing them. */
interface Store<R> {
  readonly name: string;
  readonly codec: RecordCodec<R>;
  /** Every record appended, normalized and deeply frozen, in order. */
  readonly records: R[];
  writer: MemoryLog<R> | null;
}

/**
 * Freezes `value` and everything it holds. A value frozen already is taken as frozen through,
 * which also stops at cycles; a record read from a log and appended again costs nothing.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as { readonly [key: string]: unknown })[key]);
  }
  return value;
}

class MemoryLog<R> implements EventLog<R> {
  readonly capabilities = CAPABILITIES;
  readonly repaired = null;
  readonly name: string;
  private closed = false;

  private constructor(
    private readonly store: Store<R>,
    private readonly readOnly: boolean,
    /** The records this log sees: all of them for the writer, those at its open for a reader. */
    private count: Position,
  ) {
    this.name = store.name;
  }

  static async open<R>(store: Store<R>, { readOnly = false, replay, resume }: OpenOptions<R>): Promise<MemoryLog<R>> {
    // The writer's place is taken before the first await: no other open can slip in between
    // the check for a writer and taking its place.
    if (!readOnly && store.writer !== null) throw new LockedError(store.name);
    const { records } = store;
    const count = records.length;
    const log = new MemoryLog(store, readOnly, count);
    if (!readOnly) store.writer = log;
    let position = 0;
    try {
      if (resume !== undefined && resume.position > 0) {
        if (resume.position > count) throw new ResumeMismatchError(store.name, resume.position, `the log holds ${count} records`);
        if (fingerprintOf(store.codec.encode(records[resume.position - 1] as R)) !== resume.fingerprint) {
          throw new ResumeMismatchError(store.name, resume.position, 'the record before it is not the one it was');
        }
        position = resume.position;
      }
      if (replay !== undefined) {
        for (; position < count; position++) {
          const replayed = replay(records[position] as R, position);
          if (replayed instanceof Promise) await replayed;
        }
      }
    } catch (e) {
      if (store.writer === log) store.writer = null;
      throw asDamage(store.name, position + 1, e);
    }
    return log;
  }

  get head(): Position {
    return this.count;
  }

  append(records: readonly R[], options: AppendOptions = {}): Promise<Appended> {
    try {
      return Promise.resolve(this.appendNow(records, options));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The whole append, synchronously, so that appends land in call order. */
  private appendNow(records: readonly R[], { expectedHead }: AppendOptions): Appended {
    if (this.closed) throw new ClosedError(this.name);
    if (this.readOnly) throw new ReadOnlyError(this.name);
    const from = this.count;
    assertExpectedHead(this.name, expectedHead, from);
    const { codec } = this.store;
    // All normalized before any is stored: an invalid record refuses the batch whole.
    const checked: R[] = new Array<R>(records.length);
    for (let n = 0; n < records.length; n++) checked[n] = deepFreeze(codec.normalize(records[n]));
    const stored = this.store.records;
    for (let n = 0; n < checked.length; n++) stored.push(checked[n] as R);
    this.count += checked.length;
    return { from, head: this.count };
  }

  async *read(from: Position = 0): AsyncIterable<R> {
    if (this.closed) throw new ClosedError(this.name);
    const records = this.store.records;
    const end = this.count; // the head now: records appended while reading are not read
    for (let position = Math.max(0, from); position < end; position++) {
      yield records[position] as R;
      if (this.closed) throw new ClosedError(this.name);
    }
  }

  async resumePoint(): Promise<ResumePoint> {
    if (this.closed) throw new ClosedError(this.name);
    if (this.count === 0) return { position: 0, cursor: null, fingerprint: '' };
    return { position: this.count, cursor: null, fingerprint: fingerprintOf(this.store.codec.encode(this.store.records[this.count - 1] as R)) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.store.writer === this) this.store.writer = null;
  }
}
