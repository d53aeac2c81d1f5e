/**
 * The in-memory backend: a log that lives in the backend object, for tests (memoryd's and ours).
 * It keeps every promise of `lib/log.ts` except durability, with no I/O at all:
 *
 * - **Reopen.** The records live in the backend, not in the open log: opening the same backend
 *   again gives the same log, with everything appended before (until the backend is dropped).
 * - **Checked, then stored frozen.** The records an append was given, each checked by
 *   `codec.normalize` (`lib/log-base.ts` does that, as it keeps the guards, the call order, the
 *   read-through and the resume check for every backend), are deeply frozen and stored as they
 *   are: `read` and `replay` hand out those same frozen values, so no caller can change what the
 *   log holds. `repaired` is always `null`: nothing is ever cut off.
 * - **One writer per backend object** (the store is the writer's key); read-only opens are
 *   allowed while a writer holds the log, and see the log as it was when they opened (as a
 *   read-only JSONL open does), until a `refresh` takes in what the writer appended since.
 * - **Synchronous.** An append is stored whole within its call, when none is running before it.
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
  checkedEncoder,
  type LogBackend,
  type LogCapabilities,
  type OpenOptions,
  type Position,
  type RecordCodec,
  type ResumePoint,
} from '../lib/log.js';
import { type Batches, StoredLog } from '../lib/log-base.js';

/** How to make an in-memory log. */
export interface MemoryOptions<R> {
  /** Checks (and copies) the records appended; the log stores what `normalize` gives. */
  readonly codec: RecordCodec<R>;
  /** The log's name in messages. Default `memory:`. */
  readonly name?: string;
}

const CAPABILITIES: LogCapabilities = {
  durable: false,
  files: false,
  severalWriters: false,
  readsWhileWriting: true,
  atomicBatches: true,
  watches: false,
};
/** Records per batch of a read: a reader of a large log lets others run between batches. */
const BATCH = 4096;

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
  const store: Store<R> = {
    name: options.name ?? 'memory:',
    codec: options.codec,
    encode: checkedEncoder(options.codec),
    records: [],
  };
  return {
    name: store.name,
    capabilities: CAPABILITIES,
    open: (openOptions) => MemoryLog.open(store, openOptions ?? {}),
  };
}

/** What a backend object holds between opens: the records (the store is also the writer's key). */
interface Store<R> {
  readonly name: string;
  readonly codec: RecordCodec<R>;
  /** The text of a stored record, for a fingerprint. */
  readonly encode: (record: R) => string;
  /** Every record appended, normalized and deeply frozen, in order. */
  readonly records: R[];
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

/** The records `[from, end)` of `records`, a batch at a time. */
function* batches<R>(records: readonly R[], from: Position, end: Position): Generator<readonly R[]> {
  for (let at = from; at < end; at += BATCH) yield records.slice(at, Math.min(end, at + BATCH));
}

class MemoryLog<R> extends StoredLog<R> {
  private constructor(
    private readonly store: Store<R>,
    readOnly: boolean,
  ) {
    super({ name: store.name, capabilities: CAPABILITIES, codec: store.codec, readOnly, writerKey: store });
  }

  static open<R>(store: Store<R>, options: OpenOptions<R>): Promise<MemoryLog<R>> {
    return new MemoryLog(store, options.readOnly ?? false).start(options);
  }

  /** What there is when the log opens: a reader sees the log as it was then. */
  protected _entries(from: Position): Batches<R> {
    return batches(this.store.records, from, this.store.records.length);
  }

  protected _storedBefore({ position }: ResumePoint): string | undefined {
    const { records, encode } = this.store;
    return position <= records.length ? encode(records[position - 1] as R) : undefined;
  }

  protected _storedLast(): string {
    return this.store.encode(this.store.records[this.count - 1] as R);
  }

  /** Stored whole, synchronously: checked already, so nothing can fail half-way. */
  protected _append(records: readonly R[]): void {
    const stored = this.store.records;
    for (const record of records) stored.push(deepFreeze(record));
  }

  protected _read(from: Position, to: Position | undefined): Batches<R> {
    // the head now: records appended while reading are not read
    return batches(this.store.records, from, Math.min(to ?? this.count, this.count));
  }

  /** What the writer appended since: a reader that opened before takes it in. */
  protected override _storedHead(): Position {
    return this.store.records.length;
  }

  protected _close(): void {}
}
