/**
 * The LevelDB backend: a log of records in any [abstract-level](https://github.com/Level/abstract-level)
 * database: a folder on disk (classic-level, LevelDB itself), or a database the caller made
 * (`memory-level` for tests, or any other).
 *
 * ## The format
 *
 * Keys and values are bytes. The log uses two key spaces, each a one-byte prefix, and leaves
 * every other key alone (a sublevel's keys start with `!`, so sublevels of the same database
 * never meet the log's):
 *
 * | key | value |
 * |---|---|
 * | `0x00` `format` (ASCII) | CBOR `{"format": "ledgerstore/level", "version": 1}` |
 * | `0x01` + the position, 8 bytes big-endian | the record at that position, in CBOR |
 *
 * - Record keys sort in log order, and there is one for every position from 0 to the head - 1:
 *   the head is the number of records, found by reading them through at open, so there is no
 *   counter that could disagree with them. A missing position is damage. (Records missing at
 *   the end cannot be told from records never written, as with a file cut short.)
 * - A record is the CBOR of what `codec.normalize` gives: plain maps with text keys in the
 *   record's own field order, arrays, text, integers, `null`. Standard CBOR (RFC 8949) that any
 *   CBOR library reads: no cbor-x record extension (`useRecords: false`), map lengths in their
 *   shortest form (`variableMapSize`), and integers beyond 32 bits as CBOR integers rather than
 *   the float64 that cbor-x would write, so that a reader with a typed `u64` field (Rust's serde,
 *   for one) reads a large turn number as what it is.
 * - Read back, a value is decoded and passed through `codec.normalize`, which checks it and
 *   copies it: a Honcho record so re-encodes (`codec.encode`) to the same canonical line that the
 *   JSONL backend writes. A value that does not decode or does not normalize is damage.
 * - The format marker is written with the first batch, in the same write: a database with no
 *   records has no keys at all. A marker of another format or version stops the open (damage at
 *   "record 0", the marker), so that this version never misreads, or appends to, a log that a
 *   later version wrote.
 *
 * ## Writing
 *
 * - An append is one chained batch (the marker, if it is the first, and every record), written
 *   with `sync: true`: LevelDB writes the batch to its write-ahead log as one checksummed entry
 *   and syncs it before `write` resolves, and recovery at open keeps such an entry whole or
 *   drops it whole. The append resolves only after that.
 * - Every record is checked and encoded before anything is written: one invalid record refuses
 *   the batch. Appends run one after another in call order, each after the previous one's write
 *   resolved, so that `expectedHead` and the positions an append is given see every earlier one.
 * - A failed batch write stops the log, as a failed `fdatasync` stops the JSONL log: LevelDB may
 *   have the batch in its write-ahead log without having synced it, and refuses every later
 *   write after a failed sync anyway, so whether the batch will be there after a restart is not
 *   known. Every later append is refused ({@link StoppedError}) until the log is reopened, which
 *   reads what LevelDB recovered: the batch whole, or nothing of it. A batch the database refuses
 *   before writing anything (one closed by its owner) is refused alone, and the log goes on.
 * - What `sync` covers is LevelDB's (1.20, as classic-level 3 bundles it): it `fdatasync`s the
 *   write-ahead log, and syncs the folder when it writes its manifest, which it does at open and
 *   in the background after it starts a new write-ahead log file (every 4 MiB or so). An append
 *   in between relies on the file system keeping the new file's name along with its synced data,
 *   as journaling file systems (ext4, xfs) do in practice.
 *
 * ## One writer
 *
 * - A folder: LevelDB locks its `LOCK` file (`fcntl`) for as long as the database is open, for
 *   readers too (LevelDB has no read-only mode), and the kernel drops the lock when the process
 *   dies. A second open of the folder, in this process or another, is refused with
 *   {@link LockedError}, read-only or not: `readsWhileWriting` is `false`.
 * - A database the caller made: one writable open at a time per database object in this process;
 *   read-only opens are allowed beside it (`readsWhileWriting`), and see the log as it was when
 *   they opened.
 *
 * ## A folder
 *
 * A writable open creates the folder (mode 0700; its parent must exist, as a JSONL file's
 * directory must) and syncs its parent, so that the folder survives a crash as well as the
 * records in it. A read-only open of a folder that holds no database yet is an empty log, and
 * creates nothing. LevelDB manages its own files: even a read-only open may rewrite them (it
 * folds its write-ahead log into a table at open), but it never changes a record; "the log is
 * left as it was" holds for the records.
 *
 * @module
 */
import { isUtf8 } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Decoder, Encoder, type Options as CborOptions } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import {
  ClosedError,
  asDamage,
  DamagedError,
  InvalidRecordError,
  LedgerError,
  LedgerIoError,
  LockedError,
  ReadOnlyError,
  ResumeMismatchError,
  StoppedError,
  isLedgerError,
} from '../lib/errors.js';
import { assertExpectedHead } from '../lib/expected-head.js';
import { fingerprintOf } from '../lib/fingerprint.js';
import { nodeFileIO } from './file-io.js';
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

/** Keys and values as bytes (`Uint8Array`), whatever the database's default encodings. */
export interface ByteEncodings {
  readonly keyEncoding: 'view';
  readonly valueEncoding: 'view';
}

/** An iterator's range, in bytes; `highWaterMarkBytes` is classic-level's (others ignore it). */
export interface ByteRange extends ByteEncodings {
  readonly gte: Uint8Array;
  readonly lt: Uint8Array;
  readonly highWaterMarkBytes?: number;
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

/** How to open a LevelDB log. */
export interface LevelOptions<R> {
  /** How records are checked; records are stored as the CBOR of what `normalize` gives. */
  readonly codec: RecordCodec<R>;
  /**
   * The log's name in messages. Default: the folder, or for a database the caller made its
   * `location` if it has one, else `level:` and its class's name.
   */
  readonly name?: string;
}

const ON_DISK: LogCapabilities = { durable: true, files: true, severalWriters: false, readsWhileWriting: false, atomicBatches: true };

const FOLDER_MODE = 0o700;
/** The format this version writes, and the only one it reads. */
const FORMAT = 'ledgerstore/level';
const VERSION = 1;
const META_PREFIX = 0x00;
const RECORD_PREFIX = 0x01;
const META_KEY = Uint8Array.of(META_PREFIX, ...Buffer.from('format', 'ascii'));
const RECORD_KEY_LENGTH = 9;
/** The first key after every record key. */
const RECORDS_END = Uint8Array.of(RECORD_PREFIX + 1);
/** Records read from LevelDB at a time, at open and by `read`. */
const CHUNK = 1000;

/** Bytes in and out, whatever the database's default encodings. */
const VIEW: ByteEncodings = { keyEncoding: 'view', valueEncoding: 'view' };
/** Bigger than classic-level's 16 KiB, so that an iterator's native call fills a whole chunk. */
const HIGH_WATER_MARK_BYTES = 1 << 20;
const SYNC = { sync: true } as const;

const encoder = new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false });
const DECODING: CborOptions & { readonly int64AsNumber: boolean } = {
  useRecords: false,
  mapsAsObjects: true,
  // A 64-bit integer reads as a number (beyond 2^53 an inexact one, which the codec then
  // refuses as out of range) rather than as a bigint, which no codec expects. (An option of
  // cbor-x's that its types do not list.)
  int64AsNumber: true,
};
const decoder = new Decoder(DECODING);
const META_VALUE = Uint8Array.from(encoder.encode({ format: FORMAT, version: VERSION }));

/** The databases the caller made that a log in this process has open for writing. */
const writers = new WeakSet<LevelDatabase>();

/**
 * A LevelDB log: in the folder `location` (opened with classic-level at every open, closed at
 * close), or in the abstract-level database `location` (opened if it is not; never closed by
 * the log, since the caller owns it, so that it can be opened again as the same log).
 *
 * @example
 * ```ts
 * const ledger = await Ledger.open(levelBackend('/srv/bx/memory/honcho.level', { codec: honchoCodec }));
 * const inMemory = levelBackend(new MemoryLevel(), { codec: honchoCodec, name: 'test' });
 * ```
 * @throws TypeError when the database stores text only (a `memory-level` with `storeEncoding:
 * 'utf8'`), which cannot hold the log's binary keys and values
 */
export function levelBackend<R>(location: string | LevelDatabase, options: LevelOptions<R>): LogBackend<R> {
  if (typeof location === 'string') {
    const name = options.name ?? location;
    return { name, capabilities: ON_DISK, open: (openOptions) => LevelLog.openFolder(location, name, options.codec, openOptions ?? {}) };
  }
  const db = location;
  if (!storesBytes(db)) {
    throw new TypeError('levelBackend: the database stores text only; the log needs one that stores bytes (a memory-level with storeEncoding "buffer" or "view")');
  }
  const where = (db as { location?: unknown }).location;
  const name = options.name ?? (typeof where === 'string' ? where : `level:${db.constructor.name}`);
  const capabilities: LogCapabilities = { durable: db.supports.permanence, files: false, severalWriters: false, readsWhileWriting: true, atomicBatches: true };
  return { name, capabilities, open: (openOptions) => LevelLog.openDatabase(db, name, capabilities, options.codec, openOptions ?? {}) };
}

/** Whether `db` takes keys and values as bytes (abstract-level refuses a text-only store one). */
function storesBytes(db: LevelDatabase): boolean {
  try {
    return db.keyEncoding('view').format !== 'utf8' && db.valueEncoding('view').format !== 'utf8';
  } catch {
    return false;
  }
}

/** The key of the record at `position`. */
function recordKey(position: Position): Uint8Array {
  const key = new Uint8Array(RECORD_KEY_LENGTH);
  key[0] = RECORD_PREFIX;
  const view = new DataView(key.buffer);
  view.setUint32(1, Math.floor(position / 0x1_0000_0000));
  view.setUint32(5, position >>> 0);
  return key;
}

/** The position a record key names, or `null` when `key` is not one. */
function positionOf(key: Uint8Array): Position | null {
  if (key.length !== RECORD_KEY_LENGTH || key[0] !== RECORD_PREFIX) return null;
  let high = 0;
  let low = 0;
  for (let n = 1; n < 5; n++) high = high * 256 + (key[n] as number);
  for (let n = 5; n < 9; n++) low = low * 256 + (key[n] as number);
  return high >= 0x20_0000 ? null : high * 0x1_0000_0000 + low; // beyond 2^53: no position
}

/** An iterator over the keys `[gte, lt)`, as bytes. */
function iterate(db: LevelDatabase, name: string, gte: Uint8Array, lt: Uint8Array): LevelIterator<Uint8Array, Uint8Array> {
  try {
    return db.iterator<Uint8Array, Uint8Array>({ ...VIEW, gte, lt, highWaterMarkBytes: HIGH_WATER_MARK_BYTES });
  } catch (e) {
    throw new LedgerIoError(name, causeOf(e)); // a database closed by its owner, say
  }
}

/**
 * The iterator's entries, a chunk at a time, each chunk asked for before the one before it is
 * handed out: LevelDB reads the next chunk on the thread pool while this thread decodes this
 * one. Closes the iterator when done, or when the caller stops early.
 */
async function* readAhead<K, V>(name: string, iterator: LevelIterator<K, V>): AsyncGenerator<[K, V][], void, undefined> {
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
        throw new LedgerIoError(name, causeOf(e));
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

const hex = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/**
 * `value` with every integer that does not fit in 32 bits as a bigint, which cbor-x writes as a
 * CBOR integer (a number it would write as a float64). The same object when there is none.
 */
function wideIntegersAsBigInt(value: unknown): unknown {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && (value > 0xffff_ffff || value < -0x1_0000_0000) ? BigInt(value) : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((element: unknown, n) => {
      const converted = wideIntegersAsBigInt(element);
      if (converted !== element) (copy ??= [...value])[n] = converted;
    });
    return copy ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let copy: { [key: string]: unknown } | null = null;
  for (const [key, field] of Object.entries(value)) {
    const converted = wideIntegersAsBigInt(field);
    if (converted !== field) (copy ??= { ...value })[key] = converted;
  }
  return copy ?? value;
}

/** The error inside abstract-level's `LEVEL_DATABASE_NOT_OPEN`, which says why. */
function causeOf(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'LEVEL_DATABASE_NOT_OPEN' && e instanceof Error && e.cause !== undefined ? e.cause : e;
}

/** A failure to open the database, as a ledger error: another holder's lock, or I/O. */
function openError(name: string, e: unknown): LedgerError {
  const cause = causeOf(e);
  if ((cause as { code?: unknown } | null)?.code === 'LEVEL_LOCKED') return new LockedError(name, { cause, holder: 'level' });
  return new LedgerIoError(name, cause);
}

/** Creates `folder` if missing, and syncs its parent so that the folder's name survives a crash. */
function makeFolder(folder: string): void {
  try {
    fs.mkdirSync(folder, { mode: FOLDER_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new LedgerIoError(folder, e);
    try {
      fs.opendirSync(folder).closeSync(); // refuses a file where the folder should be, with ENOTDIR
    } catch (notFolder) {
      throw new LedgerIoError(folder, notFolder);
    }
    // and sync the parent all the same: the folder's creator may have died before it did
  }
  const parent = path.dirname(path.resolve(folder));
  try {
    nodeFileIO.syncDirectory(parent);
  } catch (e) {
    throw new LedgerIoError(parent, e);
  }
}

/**
 * What `folder` holds, looked at without opening it (an open creates a database): `missing` when
 * there is no such folder, `empty` when it holds no LevelDB database, else `database`.
 * @throws {@link LedgerIoError} when `folder` is not a folder (ENOTDIR) or cannot be looked into
 */
export function levelFolder(folder: string): 'missing' | 'empty' | 'database' {
  const exists = (file: string): boolean => {
    try {
      fs.statSync(file);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new LedgerIoError(folder, e);
    }
  };
  // LevelDB writes CURRENT last when it creates a database: without it, there is none yet.
  // (Asking for it inside a file, not a folder, fails with ENOTDIR, which is reported.)
  if (exists(path.join(folder, 'CURRENT'))) return 'database';
  return exists(folder) ? 'empty' : 'missing';
}

async function closeQuietly(db: LevelDatabase): Promise<void> {
  try {
    await db.close();
    /* c8 ignore next -- classic-level's close never fails (LevelDB's close reports nothing); kept so that no failure could hide the open's error */
  } catch {
    // the open failed already; that error is the one to report
  }
}

class LevelLog<R> implements EventLog<R> {
  readonly repaired = null;
  private closed = false;
  private stopped: LedgerError | null = null;
  /** The last append in call order, settled: the next one starts after it. */
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly name: string,
    readonly capabilities: LogCapabilities,
    private readonly codec: RecordCodec<R>,
    /** `null` for a read-only open of a folder that holds no database: an empty log. */
    private readonly db: LevelDatabase | null,
    /** Whether the log closes `db` when it is closed (a folder's) or leaves it to the caller. */
    private readonly ownsDb: boolean,
    private readonly readOnly: boolean,
    private count: Position,
    /** Whether the format marker is written (with the first batch). */
    private marked: boolean,
  ) {}

  /** The value of the last record this log appended (`null` until it appends). */
  private lastValue: Uint8Array | null = null;

  static async openFolder<R>(folder: string, name: string, codec: RecordCodec<R>, options: OpenOptions<R>): Promise<LevelLog<R>> {
    const readOnly = options.readOnly ?? false;
    if (readOnly) {
      if (levelFolder(folder) !== 'database') return new LevelLog(name, ON_DISK, codec, null, false, true, 0, false);
    } else {
      makeFolder(folder);
    }
    const classic = new ClassicLevel<Uint8Array, Uint8Array>(folder, { keyEncoding: 'view', valueEncoding: 'view' });
    try {
      await classic.open({ createIfMissing: !readOnly });
    } catch (e) {
      throw openError(name, e);
    }
    const db: LevelDatabase = classic;
    try {
      const { count, marked } = await readThrough(db, name, codec, options);
      return new LevelLog(name, ON_DISK, codec, db, true, readOnly, count, marked);
    } catch (e) {
      await closeQuietly(db);
      throw e;
    }
  }

  static async openDatabase<R>(
    db: LevelDatabase,
    name: string,
    capabilities: LogCapabilities,
    codec: RecordCodec<R>,
    options: OpenOptions<R>,
  ): Promise<LevelLog<R>> {
    const readOnly = options.readOnly ?? false;
    if (!readOnly) {
      if (writers.has(db)) throw new LockedError(name);
      writers.add(db);
    }
    try {
      try {
        await db.open();
      } catch (e) {
        throw openError(name, e);
      }
      const { count, marked } = await readThrough(db, name, codec, options);
      return new LevelLog(name, capabilities, codec, db, false, readOnly, count, marked);
    } catch (e) {
      if (!readOnly) writers.delete(db);
      throw e;
    }
  }

  get head(): Position {
    return this.count;
  }

  append(records: readonly R[], { expectedHead }: AppendOptions = {}): Promise<Appended> {
    if (this.closed) return Promise.reject(new ClosedError(this.name));
    if (this.readOnly) return Promise.reject(new ReadOnlyError(this.name));
    let values: Uint8Array[];
    try {
      values = records.map((record) => encodeValue(this.codec.normalize(record)));
    } catch (e) {
      return Promise.reject(e);
    }
    const appended = this.tail.then(() => this.write(values, expectedHead));
    this.tail = appended.catch(() => undefined);
    return appended;
  }

  /** One append's turn, after every earlier append: check the head, write, count. */
  private async write(values: readonly Uint8Array[], expectedHead: Position | undefined): Promise<Appended> {
    if (this.stopped !== null) throw new StoppedError(this.name, this.stopped);
    const from = this.count;
    assertExpectedHead(this.name, expectedHead, from);
    if (values.length === 0) return { from, head: from };
    const db = this.db as LevelDatabase; // a writable log always has its database
    let batch: LevelBatch | null = null;
    try {
      const making = db.batch();
      batch = making;
      if (!this.marked) making.put<Uint8Array, Uint8Array>(META_KEY, META_VALUE, VIEW);
      values.forEach((value, n) => making.put<Uint8Array, Uint8Array>(recordKey(from + n), value, VIEW));
    } catch (e) {
      // Nothing was written: the database refused the batch before it was sent (closed by its
      // owner, say). The log can go on once that is put right.
      await batch?.close().catch(() => undefined);
      throw new LedgerIoError(this.name, causeOf(e));
    }
    try {
      await batch.write(SYNC);
    } catch (e) {
      // The batch may or may not be in LevelDB's write-ahead log, and LevelDB refuses every
      // write after a failed sync: whether these records exist is known only after a reopen.
      this.stopped = new LedgerIoError(this.name, causeOf(e));
      throw this.stopped;
    }
    this.marked = true;
    this.count += values.length;
    this.lastValue = values[values.length - 1] as Uint8Array;
    return { from, head: this.count };
  }

  async *read(from: Position = 0): AsyncIterable<R> {
    if (this.closed) throw new ClosedError(this.name);
    const end = this.count; // the records up to the head now; later appends are not read
    const start = Math.max(0, Math.ceil(from));
    if (this.db === null || !(start < end)) return;
    const iterator = iterate(this.db, this.name, recordKey(start), recordKey(end));
    let position = start;
    try {
      for await (const entries of readAhead(this.name, iterator)) {
        if (this.closed) throw new ClosedError(this.name);
        const records: R[] = [];
        for (const [key, value] of entries) {
          checkKey(this.name, key, position);
          records.push(decodeValue(this.name, this.codec, value, position));
          position++;
        }
        yield* records;
        if (this.closed) throw new ClosedError(this.name);
      }
    } catch (e) {
      // The iterator fails when the database is closed under it: that is this log's close.
      throw this.closed && isLedgerError(e, 'LEDGER_IO') ? new ClosedError(this.name) : e;
    }
    if (position < end) throw new DamagedError(this.name, position + 1, `record ${position + 1} is missing: the records end before the head, ${end}`);
  }

  async resumePoint(): Promise<ResumePoint> {
    if (this.closed) throw new ClosedError(this.name);
    await this.tail; // the head after every append called so far
    if (this.count === 0 || this.db === null) return { position: 0, cursor: null, fingerprint: '' };
    // The last value this log wrote is at hand: a read model asks after every append.
    let value: Uint8Array | undefined = this.lastValue ?? undefined;
    if (value === undefined) {
      try {
        value = await this.db.get<Uint8Array, Uint8Array>(recordKey(this.count - 1), VIEW);
      } catch (e) {
        throw new LedgerIoError(this.name, causeOf(e));
      }
    }
    if (value === undefined) throw new DamagedError(this.name, this.count, `record ${this.count} is missing`);
    return { position: this.count, cursor: null, fingerprint: fingerprintOf(value) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail; // appends called before close go through
    if (this.db === null) return;
    if (this.ownsDb) {
      try {
        await this.db.close();
        /* c8 ignore next -- the folder's database is classic-level's, whose close never fails; kept so that any failure is a LedgerError */
      } catch (e) {
        throw new LedgerIoError(this.name, causeOf(e));
      }
    } else if (!this.readOnly) {
      writers.delete(this.db);
    }
  }
}

/** The CBOR of a normalized record. */
function encodeValue(record: unknown): Uint8Array {
  try {
    return encoder.encode(wideIntegersAsBigInt(record));
  } catch (e) {
    /* c8 ignore next -- cbor-x throws Errors; String(e) is for a non-Error thrown by a record's own code (a getter), which plain data has none of */
    throw new InvalidRecordError(`it cannot be written as CBOR: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The record a value holds, checked by the codec; damage at `position` when it holds none. */
function decodeValue<R>(name: string, codec: RecordCodec<R>, value: Uint8Array, position: Position): R {
  let decoded: unknown;
  try {
    decoded = decoder.decode(value);
  } catch (e) {
    /* c8 ignore next -- cbor-x throws Errors only: String(e) is for what the type of a caught value cannot rule out */
    throw new DamagedError(name, position + 1, `the value is not CBOR (${e instanceof Error ? e.message : String(e)}): ${hex(value.subarray(0, 32))}`, {
      cause: e,
    });
  }
  if (!textIsUtf8(value)) throw new DamagedError(name, position + 1, `the value has text that is not UTF-8: ${hex(value.subarray(0, 32))}`);
  try {
    return codec.normalize(decoded);
  } catch (e) {
    if (e instanceof InvalidRecordError) throw new DamagedError(name, position + 1, `not a valid record: ${e.why}`, { cause: e });
    throw asDamage(name, position + 1, e);
  }
}

/**
 * Whether every text string in the CBOR data item `bytes` is UTF-8, as RFC 8949 requires: cbor-x
 * reads bytes that are not as U+FFFD, which would turn damage into a different record. A walk
 * over the item's heads that looks into a text string only when it has a byte above 0x7f: about
 * a quarter of the time decoding takes, 5% of a replay's. Bytes that are not well-formed CBOR are
 * the decoder's to refuse; here they only end the walk.
 */
function textIsUtf8(bytes: Uint8Array): boolean {
  /* c8 ignore next -- the walk follows bytes cbor-x decoded whole, so it never reads past their end; 0 there only ends the walk */
  const byte = (at: number): number => bytes[at] ?? 0;
  const uint32 = (at: number): number => byte(at) * 0x100_0000 + ((byte(at + 1) << 16) | (byte(at + 2) << 8) | byte(at + 3));
  let at = 0;
  let items = 1; // data items still to walk in the innermost container: Infinity in one of indefinite length
  const outer: number[] = []; // the same for each container of indefinite length around it
  while (items > 0 && at < bytes.length) {
    const initial = byte(at++);
    if (initial === 0xff) {
      // the "break" that ends a container of indefinite length
      /* c8 ignore next -- cbor-x refuses a break outside a container of indefinite length; one would end the walk */
      items = (outer.pop() ?? 1) - 1;
      continue;
    }
    const major = initial >> 5;
    const info = initial & 0x1f;
    let argument = info;
    if (info === 24) {
      argument = byte(at);
      at += 1;
    } else if (info === 25) {
      argument = (byte(at) << 8) | byte(at + 1);
      at += 2;
    } else if (info === 26) {
      argument = uint32(at);
      at += 4;
    } else if (info === 27) {
      argument = uint32(at) * 0x1_0000_0000 + uint32(at + 4);
      at += 8;
    } else if (info === 31 && major >= 2 && major <= 5) {
      outer.push(items);
      items = Infinity;
      continue;
    }
    items--;
    if (major === 2) {
      at += argument;
    } else if (major === 3) {
      const end = at + argument;
      for (let n = at; n < end; n++) {
        if (byte(n) > 0x7f) {
          if (!isUtf8(bytes.subarray(at, end))) return false;
          break;
        }
      }
      at = end;
    } else if (major === 4) {
      items += argument;
    } else if (major === 5) {
      items += 2 * argument;
    } else if (major === 6) {
      items += 1; // a tag's content
    }
  }
  return true;
}

/** Damage unless `key` is the key of the record at `position`. */
function checkKey(name: string, key: Uint8Array, position: Position): void {
  const found = positionOf(key);
  if (found === position) return;
  if (found === null) throw new DamagedError(name, position + 1, `where record ${position + 1} should be is the key ${hex(key)}, which is not a record's`);
  throw new DamagedError(name, position + 1, `record ${position + 1} is missing: the next record is ${found + 1}`);
}

/**
 * Reads the log through: the format marker, then every record in order, each handed to
 * `replay`. Gives the number of records and whether the marker is there.
 */
async function readThrough<R>(
  db: LevelDatabase,
  name: string,
  codec: RecordCodec<R>,
  { replay, resume }: OpenOptions<R>,
): Promise<{ count: Position; marked: boolean }> {
  let meta: Uint8Array | undefined;
  try {
    meta = await db.get<Uint8Array, Uint8Array>(META_KEY, VIEW);
  } catch (e) {
    throw new LedgerIoError(name, causeOf(e));
  }
  if (meta !== undefined) checkMarker(name, meta);
  const from = resume === undefined ? 0 : await checkResume(db, name, resume);
  const iterator = iterate(db, name, recordKey(from), RECORDS_END);
  let count = from;
  for await (const entries of readAhead(name, iterator)) {
    if (meta === undefined) throw new DamagedError(name, 0, 'there are records but no format marker: not a log that ledgerstore wrote');
    for (const [key, value] of entries) {
      checkKey(name, key, count);
      try {
        // decoded whether or not there is a replay: an open reads every record through
        const record = decodeValue(name, codec, value, count);
        const replayed = replay?.(record, count);
        if (replayed instanceof Promise) await replayed;
      } catch (e) {
        throw asDamage(name, count + 1, e);
      }
      count++;
    }
  }
  return { count, marked: meta !== undefined };
}


/**
 * Checks that the database still holds, right before `resume`'s position, the record it held,
 * and gives the position to read from.
 * @throws {@link ResumeMismatchError} when it does not
 */
async function checkResume(db: LevelDatabase, name: string, resume: ResumePoint): Promise<Position> {
  if (resume.position === 0) return 0;
  let value: Uint8Array | undefined;
  try {
    value = await db.get<Uint8Array, Uint8Array>(recordKey(resume.position - 1), VIEW);
  } catch (e) {
    throw new LedgerIoError(name, causeOf(e));
  }
  if (value === undefined) throw new ResumeMismatchError(name, resume.position, `the log holds no record ${resume.position}`);
  if (fingerprintOf(value) !== resume.fingerprint) throw new ResumeMismatchError(name, resume.position, 'the record before it is not the one it was');
  return resume.position;
}

/** Damage unless `value` is this version's format marker. */
function checkMarker(name: string, value: Uint8Array): void {
  let marker: unknown;
  try {
    marker = decoder.decode(value);
  } catch {
    marker = undefined;
  }
  const { format, version } = (typeof marker === 'object' && marker !== null ? marker : {}) as { format?: unknown; version?: unknown };
  if (format !== FORMAT) throw new DamagedError(name, 0, `the format marker is not ledgerstore's (${hex(value.subarray(0, 32))})`);
  if (version !== VERSION) {
    throw new DamagedError(name, 0, `the log is in version ${String(version)} of the format, which this ledgerstore does not read (it reads version ${VERSION})`);
  }
}
