/**
 * The part of an abstract-level database the LevelDB backend (`index.ts`, whose top documents
 * the log's keys) uses, and how it reads one: ranges of keys as bytes, a chunk at a time.
 *
 * @module
 */
import { LedgerIoError } from '../../lib/errors.js';
import { causeOf, levelFailure } from '../../lib/level-failure.js';

/**
 * Records read from LevelDB at a time, at open and by `read`. Measured on a replay of 1M records:
 * 250 to 2,000 cost the same, 10,000 (about 1 MiB a call) a third more CPU.
 */
const CHUNK = 1000;
/** Bigger than classic-level's 16 KiB, so that an iterator's native call fills a whole chunk. */
const HIGH_WATER_MARK_BYTES = 1 << 20;

/** Keys and values as bytes (`Uint8Array`), whatever the database's default encodings. */
export interface ByteEncodings {
  readonly keyEncoding: 'view';
  readonly valueEncoding: 'view';
}

/** An iterator's range, in bytes; `highWaterMarkBytes` is classic-level's (others ignore it). */
export interface ByteRange extends ByteEncodings, ValuesOnly {
  readonly gte: Uint8Array;
  readonly lt: Uint8Array;
  readonly highWaterMarkBytes?: number;
}

/** An iterator that reads the values alone (its keys `undefined`), past LevelDB's block cache (`fillCache` is classic-level's). */
export interface ValuesOnly {
  readonly keys?: false;
  readonly fillCache?: false;
}

/** The part of an abstract-level iterator that the log uses. */
export interface LevelIterator<K, V> {
  nextv(size: number): Promise<[K, V][]>;
  close(): Promise<void>;
}

/** The part of an abstract-level chained batch that the log uses. */
export interface LevelBatch {
  put<K, V>(key: K, value: V, options: ByteEncodings): unknown;
  /** `sync` is classic-level's (LevelDB's `WriteOptions::sync`); databases without a disk ignore it. */
  write(options: { readonly sync: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * The part of an abstract-level database that the log uses: every abstract-level database
 * (`ClassicLevel`, `MemoryLevel`, a sublevel of either, ...) is one, whatever its type
 * parameters. The log passes its own encodings on every operation.
 */
export interface LevelDatabase {
  readonly supports: { readonly permanence: boolean };
  open(): Promise<void>;
  close(): Promise<void>;
  keyEncoding(encoding: 'view'): { readonly format: string };
  valueEncoding(encoding: 'view'): { readonly format: string };
  get<K, V>(key: K, options: ByteEncodings): Promise<V | undefined>;
  iterator<K, V>(options: ByteRange): LevelIterator<K, V>;
  batch(): LevelBatch;
}

/** Bytes in and out, whatever the database's default encodings. */
export const VIEW: ByteEncodings = { keyEncoding: 'view', valueEncoding: 'view' };

/** An iterator over the keys `[gte, lt)`, as bytes; with `only`, their values alone. */
export function iterate(
  db: LevelDatabase,
  name: string,
  gte: Uint8Array,
  lt: Uint8Array,
  only: ValuesOnly = {},
): LevelIterator<Uint8Array, Uint8Array> {
  try {
    return db.iterator<Uint8Array, Uint8Array>({
      ...VIEW,
      ...only,
      gte,
      lt,
      highWaterMarkBytes: HIGH_WATER_MARK_BYTES,
    });
  } catch (e) {
    throw new LedgerIoError(name, causeOf(e)); // a database closed by its owner, say
  }
}

/**
 * The iterator's entries, a chunk at a time, each chunk asked for before the one before it is
 * handed out: LevelDB reads the next chunk on the thread pool while this thread decodes this
 * one. Closes the iterator when done, or when the caller stops early.
 */
export async function* readAhead<K, V>(
  name: string,
  iterator: LevelIterator<K, V>,
): AsyncGenerator<[K, V][], void, undefined> {
  const ask = (): Promise<[K, V][]> => {
    const asked = iterator.nextv(CHUNK);
    asked.catch(() => undefined); // handled where it is awaited, even if that is after it failed
    return asked;
  };
  let next = ask();
  try {
    for (;;) {
      let entries: [K, V][];
      try {
        entries = await next;
      } catch (e) {
        throw levelFailure(name, e, 'level');
      }
      if (entries.length === 0) return;
      next = ask();
      yield entries;
    }
  } finally {
    await next.catch(() => undefined);
    await iterator.close().catch(() => undefined);
  }
}
