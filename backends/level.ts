/**
 * The LevelDB backend: a log of records in any [abstract-level](https://github.com/Level/abstract-level)
 * database: a folder on disk (classic-level, LevelDB itself), or a database the caller made
 * (`memory-level` for tests, or any other).
 *
 * ## The format (version 2)
 *
 * Keys and values are bytes. The log uses two key spaces, each a one-byte prefix, and leaves
 * every other key alone (a sublevel's keys start with `!`, so sublevels of the same database
 * never meet the log's):
 *
 * | key | value |
 * |---|---|
 * | `0x00` `format` (ASCII) | CBOR `{"format": "ledgerstore/level", "version": 2}` |
 * | `0x01` + the position, 8 bytes big-endian | the record at that position in CBOR, then its checksum |
 *
 * - Record keys sort in log order, and there is one for every position from 0 to the head - 1:
 *   the head is the number of records, found by reading them through at open, so there is no
 *   counter that could disagree with them. A missing position is damage. (Records missing at
 *   the end cannot be told from records never written, as with a file cut short; see "A
 *   folder" for what catches them there.)
 * - A record's value is a CBOR sequence (RFC 8742) of two data items: the record, then its
 *   checksum as a byte string of 4 bytes (`0x44` and the CRC-32C, big-endian, of the record's
 *   key and the record's CBOR bytes). So one changed byte anywhere in a value, or a value moved
 *   under another key, is damage at its record, never a different record.
 * - The record is the CBOR of what `codec.normalize` gives: plain maps with text keys in the
 *   record's own field order, arrays, text, integers, `null`. Standard CBOR (RFC 8949) that any
 *   CBOR library reads: no cbor-x record extension (`useRecords: false`), map lengths in their
 *   shortest form (`variableMapSize`), and integers beyond 32 bits as CBOR integers rather than
 *   the float64 that cbor-x would write, so that a reader with a typed `u64` field (Rust's serde,
 *   for one) reads a large turn number as what it is. A turn above 2^53-1 (a bigint) is a CBOR
 *   uint64 like any other; read back, a 64-bit integer a number cannot hold exactly is a bigint
 *   (`level-values.ts`), so every u64 turn round-trips, and the bytes of every value written
 *   before are the same (version 2 still).
 * - Read back, a value's checksum is checked, the record decoded and passed through
 *   `codec.normalize`, which checks it and copies it: a Honcho record so re-encodes
 *   (`codec.encode`) to the same canonical line that the JSONL backend writes. A value that does
 *   not match its checksum, does not decode or does not normalize is damage. The read-through
 *   at open of a codec with a value scan (`value-scan.ts`; the Honcho codec's checks the
 *   canonical CBOR byte by byte) reads the values alone and hands the scan those that match
 *   their checksums, a chunk at a time; from the first that does not, it reads keys and values
 *   as above, so that damage is told the same way. A folder's values it reads from the
 *   folder's files rather than through LevelDB's iterator where the files give what the
 *   iterator would (`level-read.ts`), handing the read to the iterator where they may not.
 * - The format marker is written with the first batch, in the same write: a database with no
 *   records has no keys at all. A marker of another format, or of a version this one does not
 *   know, stops the open (damage at "record 0", the marker), so that this version never
 *   misreads, or appends to, a log that a later version wrote.
 *
 * **Version 1** (ledgerstore 0.1) is version 2 without the checksum: a value is the record's
 * CBOR alone. This version reads it (a reader, `verify`, `copy`), and refuses to append to it
 * ({@link OldFormatError}), since a log half in one version and half in the other would read as
 * neither. The migration is a copy, which writes version 2: `ledgerstore copy level:<old>
 * level:<new>`, then use the new folder (docs/runbook.md#level-format-upgrade).
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
 * - A folder: LevelDB locks its `LOCK` file (`fcntl`) for as long as the database is open, and
 *   the kernel drops the lock when the process dies. A second writable open of the folder, in
 *   this process or another, is refused with {@link LockedError}, and so is a read-only one while
 *   a writer holds it (the reader tests the lock while it copies the files: `readsWhileWriting`
 *   is `false`).
 * - A database the caller made: one writable open at a time per database object in this process;
 *   read-only opens are allowed beside it (`readsWhileWriting`), and see the log as it was when
 *   they opened.
 *
 * ## A folder
 *
 * LevelDB changes a folder it opens, even to read it and even when the open then fails (it
 * renames its info log, folds its write-ahead log into a table, writes a new manifest), and it
 * creates a database in any folder without `CURRENT`, deleting the tables it finds there. So the
 * folder is looked at first, from its files alone (`level-folder.ts`), and LevelDB is handed only
 * a folder that is missing or empty, or that holds an intact ledger:
 *
 * - A writable open of a missing or empty folder creates it (mode 0700; its parent must exist,
 *   as a JSONL file's directory must, and is synced), writes the marker file `LEDGERSTORE`
 *   (`{"format": "ledgerstore/level", "version": 2}`), then lets LevelDB create the database. A
 *   folder holding anything else is refused and left as it is: other files, or a read model
 *   ({@link ForeignFolderError}); LevelDB files without `CURRENT`, a manifest that does not read,
 *   a table missing or cut, a write-ahead log with a hole (a damaged batch with later batches
 *   kept: acknowledged batches LevelDB would drop), any table whose blocks do not match their
 *   checksums (every table is checked at every open, as LevelDB's `verify_checksums` would, which
 *   classic-level does not turn on) ({@link LevelFolderDamagedError}).
 * - A writer that closes the log writes its head and the fingerprint of its last record into the
 *   marker file (synced). An open that finds fewer records, or another record there, refuses the
 *   folder as damaged: acknowledged records lost at the end (a write-ahead log deleted, a last
 *   batch changed) cannot be told from records never written by the log alone. (A writer killed
 *   before it closed leaves the marker of the close before; the records after it are covered by
 *   the checks above, but a change to the very last batch of the write-ahead log then reads as a
 *   write a crash cut short.)
 * - A read-only open changes nothing in the folder, nor creates it: a missing or empty folder is
 *   an empty log, and a database is opened in a copy of its live files made aside, in the
 *   system's temporary folder (the tables hard-linked where the file system allows), removed at
 *   close.
 * - A folder without the marker file is one that ledgerstore 0.1 wrote (or not a ledger): read
 *   as version 1 when it holds a version 1 log, adopted when its database holds nothing, and
 *   refused when it holds keys that are not a ledger's (a read model of ledgerstore 0.1).
 *
 * Longer than most files, and earned: one log and its format, which this doc gives whole (the
 * values are `level-values.ts`, the database's interface `level-database.ts`).
 *
 * @module
 */
import { ClassicLevel } from 'classic-level';
import {
  DamagedError,
  ForeignFolderError,
  LedgerIoError,
  LevelFolderDamagedError,
  OldFormatError,
} from '../lib/errors.js';
import { fingerprintOf } from '../lib/fingerprint.js';
import { CHECKSUM_LENGTH, sealedBodyEnd } from '../lib/level-files.js';
import {
  assertNotInUse,
  causeOf,
  inspectFolder,
  type LiveFiles,
  largestKey,
  levelFailure,
  type Marker,
  makeFolder,
  peekDatabase,
  removeSnapshot,
  reserveFolder,
  snapshotFolder,
  verifyTables,
  withFolderLocked,
  writeMarker,
} from '../lib/level-folder.js';
import type { ScannedLines } from '../lib/line-scan.js';
import type { LogBackend, LogCapabilities, OpenOptions, Position, RecordCodec, ResumePoint } from '../lib/log.js';
import { StoredLog } from '../lib/log-base.js';
import type { ValueScan } from '../lib/value-scan.js';
import { iterate, type LevelBatch, type LevelDatabase, readAhead, type ValuesOnly, VIEW } from './level-database.js';
import { positionOf, RECORD_KEY_LENGTH, RECORD_PREFIX, RECORDS_END, recordKey, writeRecordKey } from './level-keys.js';
import { RecordFiles } from './level-read.js';
import { checksumAt, decoder, decodeValue, encodeRecord, encoder, hex, sealed } from './level-values.js';

export { levelFolder } from '../lib/level-folder.js';
export type { ByteEncodings, ByteRange, LevelBatch, LevelDatabase, LevelIterator } from './level-database.js';

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

const ON_DISK: LogCapabilities = {
  durable: true,
  files: true,
  severalWriters: false,
  readsWhileWriting: false,
  atomicBatches: true,
  watches: false,
};

/** The format this version writes. */
const FORMAT = 'ledgerstore/level';
const VERSION = 2;
/** The versions it reads: version 1 is version 2 without the values' checksums. */
const READS = [1, 2];
const META_PREFIX = 0x00;
const META_KEY = Uint8Array.of(META_PREFIX, ...Buffer.from('format', 'ascii'));

const SYNC = { sync: true } as const;
/** How the read-through at open reads values for the codec's value scan: no keys, past the block cache (each block is read once). */
const VALUES_ONLY: ValuesOnly = { keys: false, fillCache: false };

const META_VALUE = Uint8Array.from(encoder.encode({ format: FORMAT, version: VERSION }));
/** What the marker file of a folder that holds a log says. */
const FOLDER_MARKER: Marker = { format: FORMAT, version: VERSION };

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
    return {
      name,
      capabilities: ON_DISK,
      open: (openOptions) => LevelLog.open({ folder: location }, name, ON_DISK, options.codec, openOptions ?? {}),
    };
  }
  const db = location;
  if (!storesBytes(db)) {
    throw new TypeError(
      'levelBackend: the database stores text only; the log needs one that stores bytes (a memory-level with storeEncoding "buffer" or "view")',
    );
  }
  const where = (db as { location?: unknown }).location;
  const name = options.name ?? (typeof where === 'string' ? where : `level:${db.constructor.name}`);
  const capabilities: LogCapabilities = {
    durable: db.supports.permanence,
    files: false,
    severalWriters: false,
    readsWhileWriting: true,
    atomicBatches: true,
    watches: false,
  };
  return {
    name,
    capabilities,
    open: (openOptions) => LevelLog.open({ db }, name, capabilities, options.codec, openOptions ?? {}),
  };
}

/** Whether `db` takes keys and values as bytes (abstract-level refuses a text-only store one). */
function storesBytes(db: LevelDatabase): boolean {
  try {
    return db.keyEncoding('view').format !== 'utf8' && db.valueEncoding('view').format !== 'utf8';
  } catch {
    return false;
  }
}

/**
 * `values`, the first at `first`, copied end to end for the codec's value scan
 * (`value-scan.ts`), the n-th's record at `[starts[n], ends[n])`, each while it matches its
 * checksum under the key its position has: `count` of them. The first that does not match, and
 * those after it, are left out: the values alone cannot say what is wrong (a value changed, or
 * the key of another position), the ordinary read with keys does.
 */
function laidOut(
  values: readonly (readonly [unknown, Uint8Array])[],
  first: Position,
): { bytes: Buffer; starts: Int32Array; ends: Int32Array; count: number } {
  let total = 0;
  for (let n = 0; n < values.length; n++) total += (values[n] as [unknown, Uint8Array])[1].length;
  const bytes = Buffer.allocUnsafe(total);
  const starts = new Int32Array(values.length);
  const ends = new Int32Array(values.length);
  const key = new Uint8Array(RECORD_KEY_LENGTH);
  // the checksum under the key of the value at hand (`key`, rewritten for each), checked where the value lies
  const crcOf = (value: Uint8Array, end: number): number => checksumAt(key, value, end);
  let at = 0;
  let count = 0;
  for (; count < values.length; count++) {
    const value = (values[count] as [unknown, Uint8Array])[1];
    writeRecordKey(key, first + count);
    const end = sealedBodyEnd(value, crcOf);
    if (typeof end !== 'number') break;
    bytes.set(value, at);
    starts[count] = at;
    ends[count] = at + end;
    at += value.length;
  }
  return { bytes, starts, ends, count };
}

/** What a folder's marker file says of the log when a writer last closed it, if it says. */
interface ClosedAt {
  readonly head: Position;
  readonly fingerprint: string;
}

function closedAtOf(marker: Marker | null): ClosedAt | null {
  const head = marker?.['head'];
  const fingerprint = marker?.['fingerprint'];
  return typeof head === 'number' && typeof fingerprint === 'string' ? { head, fingerprint } : null;
}

/** What an open of a folder does, once the folder was looked at. */
type Prepared =
  | { readonly open: 'nothing' }
  | {
      readonly open: 'create' | 'existing';
      readonly location: string;
      readonly closedAt: ClosedAt | null;
      /** Its records, to be read from its files (`level-read.ts`); `null` for the iterator to read. */
      readonly files: RecordFiles | null;
    };

/**
 * Looks at the folder, refusing it when it is not a log's or is damaged, and prepares it:
 * nothing to open (a reader of a missing or empty folder), a database to create (the folder and
 * its marker made), or one to open, in the folder or (for a reader) in a copy of it.
 */
async function prepareFolder(folder: string, name: string, readOnly: boolean): Promise<Prepared> {
  const found = inspectFolder(folder, FORMAT);
  if (found.state === 'foreign') throw new ForeignFolderError(folder, found.why);
  if (found.state === 'damaged') throw new LevelFolderDamagedError(folder, found.file, found.why);
  const closedAt = found.state === 'missing' ? null : closedAtOf(found.marker);
  if (found.state !== 'database') {
    if (closedAt !== null && closedAt.head > 0) {
      throw new LevelFolderDamagedError(
        folder,
        null,
        `the log held ${closedAt.head} records when a writer last closed it, and the folder holds no database now`,
      );
    }
    if (readOnly) return { open: 'nothing' };
    makeFolder(folder);
    if (found.state === 'missing' || found.marker === null) writeMarker(folder, FOLDER_MARKER);
    return { open: 'create', location: folder, closedAt: null, files: null };
  }
  verifyTables(folder, found.live);
  if (closedAt !== null) {
    // Records lost at the end (a write-ahead log cut or emptied, its last batch changed) are
    // seen from the files, before LevelDB's open drops what does not read for good.
    const largest = largestKey(found.live, RECORD_PREFIX);
    // (a key that names no position is damage the read through reports where it is)
    const last = largest === 'unknown' || largest === null ? null : positionOf(largest);
    if (largest === null || last !== null) checkClosedHead(folder, last === null ? 0 : last + 1, closedAt);
  }
  if (found.marker === null) {
    const version = await unmarkedVersion(folder, name, found.live);
    if (version !== null && version !== VERSION && !readOnly) throw new OldFormatError(folder, version, VERSION);
    if (!readOnly) writeMarker(folder, FOLDER_MARKER); // adopted: empty, or a log of this version
  }
  const location = readOnly ? snapshotFolder(folder, found.live) : folder;
  if (!readOnly) makeFolder(folder); // syncs its parent, which the folder's creator may have died before doing
  try {
    // opened while the folder is locked: the live tables, which LevelDB may compact away once it runs
    return { open: 'existing', location, closedAt, files: RecordFiles.open(location, found.live) };
  } catch (e) {
    if (readOnly) removeSnapshot(location);
    throw e;
  }
}

/**
 * The format version of a database in a folder without a marker file (one ledgerstore 0.1
 * wrote, or a caller's own classic-level database), looked at in a copy: the version its log's
 * marker says, `null` for a database that holds nothing.
 * @throws {@link ForeignFolderError} when it holds keys and no log's marker (not a ledger)
 * @throws `DamagedError` when the log's marker is not one this version reads
 */
async function unmarkedVersion(folder: string, name: string, live: LiveFiles): Promise<number | null> {
  return peekDatabase(
    folder,
    live,
    (e) => levelFailure(name, e, 'level'),
    async (db) => {
      const meta = await db.get(META_KEY);
      if (meta !== undefined) return checkMarker(name, meta);
      if ((await db.keys({ limit: 1 }).all()).length > 0) {
        throw new ForeignFolderError(
          folder,
          "it holds a LevelDB database whose keys are not a ledger's (a read model of ledgerstore 0.1, or another program's database)",
        );
      }
      return null;
    },
  );
}

/** Damage unless a log of `head` records holds every record its last writer closed it with. */
function checkClosedHead(folder: string, head: Position, closedAt: ClosedAt): void {
  if (head < closedAt.head) {
    throw new LevelFolderDamagedError(
      folder,
      null,
      `acknowledged records are missing: the log held ${closedAt.head} records when a writer last closed it, and it holds ${head}`,
    );
  }
}

/** Damage unless the log holds, at the head its last writer closed it at, the record it held. */
async function checkClosedAt(db: LevelDatabase, folder: string, head: Position, closedAt: ClosedAt): Promise<void> {
  if (closedAt.head === 0) return;
  checkClosedHead(folder, head, closedAt);
  let value: Uint8Array | undefined;
  try {
    value = await db.get<Uint8Array, Uint8Array>(recordKey(closedAt.head - 1), VIEW);
  } catch (e) {
    throw levelFailure(folder, e, 'level');
  }
  if (value === undefined || fingerprintOf(value) !== closedAt.fingerprint) {
    throw new LevelFolderDamagedError(
      folder,
      null,
      `record ${closedAt.head} is not the one the log held when a writer last closed it: the records were changed or replaced`,
    );
  }
}

/** Where a LevelDB log is: a folder, or a database the caller made. */
type Place = { readonly folder: string } | { readonly db: LevelDatabase };

class LevelLog<R> extends StoredLog<R> {
  private readonly codec: RecordCodec<R>;
  /** `null` before the open, and for a read-only open of a folder that holds no database: an empty log. */
  private db: LevelDatabase | null = null;
  /** Whether the log closes `db` when it is closed (a folder's) or leaves it to the caller. */
  private ownsDb = false;
  /** A writable folder's: where its close writes the marker file. */
  private folder: string | null = null;
  /** A read-only open's copy of a folder, removed at close. */
  private snapshot: string | null = null;
  /** What the folder's marker says of the log when a writer last closed it. */
  private closedAt: ClosedAt | null = null;
  /** Gives the folder back to other opens of this process (see `reserveFolder`). */
  private release: () => void = () => undefined;
  /** The format marker's value in the database, `undefined` when there is none yet (it is written with the first batch). */
  private meta: Uint8Array | undefined = undefined;
  /** The format version the log is in: its marker's, or this version's for a log with none yet. */
  private version = VERSION;
  /** The value of the last record this log appended (`null` until it appends). */
  private lastValue: Uint8Array | null = null;
  /** Whether this open sent a batch to the database: its close then writes the folder's marker. */
  private appended = false;
  /** A folder's records, for the read-through at open to read from its files; `null` once read, or for the iterator to read. */
  private files: RecordFiles | null = null;

  private constructor(
    name: string,
    capabilities: LogCapabilities,
    codec: RecordCodec<R>,
    readOnly: boolean,
    private readonly place: Place,
  ) {
    // A folder is held for this process by `reserveFolder` (LevelDB's lock keeps other
    // processes out); a database the caller made, by its object.
    super({ name, capabilities, codec, readOnly, writerKey: 'db' in place ? place.db : null });
    this.codec = codec;
  }

  static open<R>(
    place: Place,
    name: string,
    capabilities: LogCapabilities,
    codec: RecordCodec<R>,
    options: OpenOptions<R>,
  ): Promise<LevelLog<R>> {
    return new LevelLog(name, capabilities, codec, options.readOnly ?? false, place).start(options);
  }

  protected override async _open(): Promise<void> {
    if ('db' in this.place) {
      this.db = this.place.db;
      try {
        await this.db.open();
      } catch (e) {
        throw levelFailure(this.name, e, 'level');
      }
    } else {
      await this.openFolder(this.place.folder);
      if (this.db === null) return; // a reader of a folder with no database: an empty log
    }
    try {
      this.meta = await this.db.get<Uint8Array, Uint8Array>(META_KEY, VIEW);
    } catch (e) {
      throw levelFailure(this.name, e, 'level');
    }
    if (this.meta !== undefined) this.version = checkMarker(this.name, this.meta);
    if (this.version !== VERSION && !this.readOnly) throw new OldFormatError(this.name, this.version, VERSION);
  }

  /** Looks at the folder (under a lock that keeps a LevelDB out meanwhile), and opens its database, in the folder or in a reader's copy of it. */
  private async openFolder(folder: string): Promise<void> {
    const { name, readOnly } = this;
    // a writer keeps the folder from other opens of this process until it closes
    if (readOnly) assertNotInUse(folder, 'level');
    else this.release = reserveFolder(folder, 'level');
    const prepared = await withFolderLocked(folder, 'level', readOnly, () => prepareFolder(folder, name, readOnly));
    if (prepared.open === 'nothing') return;
    if (prepared.location !== folder) this.snapshot = prepared.location;
    else this.folder = folder;
    this.closedAt = prepared.closedAt;
    this.files = prepared.files;
    const classic = new ClassicLevel<Uint8Array, Uint8Array>(prepared.location, {
      keyEncoding: 'view',
      valueEncoding: 'view',
    });
    try {
      await classic.open({ createIfMissing: prepared.open === 'create' });
    } catch (e) {
      this.closeFiles();
      throw levelFailure(name, e, 'level');
    }
    this.db = classic;
    this.ownsDb = true;
  }

  protected async _storedBefore({ position }: ResumePoint): Promise<Uint8Array | undefined> {
    return this.db === null ? undefined : this.valueAt(position - 1);
  }

  /** The stored value at `position`, `undefined` when there is none. */
  private async valueAt(position: Position): Promise<Uint8Array | undefined> {
    try {
      return await (this.db as LevelDatabase).get<Uint8Array, Uint8Array>(recordKey(position), VIEW);
    } catch (e) {
      throw levelFailure(this.name, e, 'level');
    }
  }

  /**
   * The records from `from`, a chunk at a time, each record checked and decoded when it is
   * reached (by the codec's value scan where it has one); then, for a folder, that it holds what
   * its last writer closed it with.
   */
  protected async *_entries(from: Position): AsyncGenerator<Iterable<R> | ScannedLines<R>> {
    const db = this.db;
    if (db === null) return;
    const scan = this.version === 1 ? undefined : this.codec.valueScan;
    const files = this.files;
    this.files = null;
    let head: Position;
    try {
      head = yield* scan === undefined
        ? this.decodedFrom(db, from)
        : files === null
          ? this.scannedFrom(db, from, scan)
          : this.filesFrom(db, from, scan, files);
    } finally {
      files?.close();
    }
    if (this.closedAt !== null && 'folder' in this.place)
      await checkClosedAt(db, this.place.folder, head, this.closedAt);
  }

  /**
   * The records from `from`, a chunk of entries at a time, each decoded when it is reached; gives
   * the head. The first key read is `gte` (by default the key of `from`).
   */
  private async *decodedFrom(
    db: LevelDatabase,
    from: Position,
    gte = recordKey(from),
  ): AsyncGenerator<Iterable<R>, Position> {
    let count = from;
    for await (const entries of readAhead(this.name, iterate(db, this.name, gte, RECORDS_END))) {
      this.assertMarked();
      yield this.decoded(entries, count);
      count += entries.length;
    }
    return count;
  }

  /**
   * The records from `from` as the codec's value scan reads them: the values alone, a chunk at a
   * time, each checked against its checksum under the key its position has. From the first
   * that does not match on, they are read with their keys and decoded one by one
   * ({@link LevelLog.decodedFrom}), which says what is wrong, where. Gives the head.
   */
  private async *scannedFrom(
    db: LevelDatabase,
    from: Position,
    scan: ValueScan<R>,
  ): AsyncGenerator<ScannedLines<R> | Iterable<R>, Position> {
    let position = from;
    let matched = true;
    const values = iterate(db, this.name, recordKey(from), RECORDS_END, VALUES_ONLY);
    for await (const entries of readAhead(this.name, values)) {
      this.assertMarked();
      const { bytes, starts, ends, count } = laidOut(entries, position);
      const first = position;
      // the general decoding of a value the scan does not vouch for, with its words for what is wrong
      const fallback = (n: number): R =>
        decodeValue(
          this.name,
          this.codec,
          recordKey(first + n),
          (entries[n] as [unknown, Uint8Array])[1],
          first + n,
          true,
        );
      if (count > 0) yield scan.values(bytes, starts, ends, count, fallback);
      position += count;
      matched = count === entries.length;
      if (!matched) break;
    }
    return matched ? position : yield* this.decodedFrom(db, position, keyAfterTaken(from, position));
  }

  /**
   * The records from `from` as {@link LevelLog.scannedFrom} reads them, from the folder's files
   * (`files`) rather than through LevelDB's iterator; from the first position the files do not
   * give as it would (damage, or anything out of the ordinary), through the iterator. Gives the head.
   */
  private async *filesFrom(
    db: LevelDatabase,
    from: Position,
    scan: ValueScan<R>,
    files: RecordFiles,
  ): AsyncGenerator<ScannedLines<R> | Iterable<R>, Position> {
    const chunks = files.chunks(from);
    let step = chunks.next();
    for (; step.done !== true; step = chunks.next()) {
      const { bytes, starts, ends, count, first } = step.value;
      if (count === 0) continue;
      this.assertMarked();
      // the general decoding of a value the scan does not vouch for, with its words for what is wrong
      const fallback = (n: number): R =>
        decodeValue(
          this.name,
          this.codec,
          recordKey(first + n),
          bytes.subarray(starts[n] as number, (ends[n] as number) + CHECKSUM_LENGTH),
          first + n,
          true,
        );
      yield scan.values(bytes, starts, ends, count, fallback);
    }
    // Even when the files gave every record they hold, the iterator reads on from there: the
    // files were read under our folder lock, which is let go before LevelDB's own is taken, and
    // a writer in another process may have appended and closed in between. Its records are in
    // the database LevelDB opened, not in the files read before; missing them would give a head
    // short of the log's, and this writer's next append would overwrite acknowledged records.
    // Nothing follows, usually: one seek.
    const { position } = step.value;
    return yield* this.decodedFrom(db, position, keyAfterTaken(from, position));
  }

  /** Closes the folder's files, unless the read-through did. */
  private closeFiles(): void {
    this.files?.close();
    this.files = null;
  }

  /** @throws `DamagedError` when the database holds records but no format marker */
  private assertMarked(): void {
    if (this.meta === undefined)
      throw new DamagedError(this.name, 0, 'there are records but no format marker: not a log that ledgerstore wrote');
  }

  /** The records of `entries`, the first at `position`, each decoded when it is reached. */
  private *decoded(entries: readonly [Uint8Array, Uint8Array][], position: Position): Generator<R> {
    for (const [key, value] of entries) {
      checkKey(this.name, key, position);
      // decoded whether or not there is a replay: an open reads every record through
      yield decodeValue(this.name, this.codec, key, value, position, this.version !== 1);
      position++;
    }
  }

  /** One batch, each record sealed with its checksum, written with `sync`; the marker with the first. */
  protected async _append(records: readonly R[]): Promise<void> {
    const from = this.head;
    const db = this.db as LevelDatabase; // a writable log always has its database
    const values = records.map((record, n) => sealed(recordKey(from + n), encodeRecord(record)));
    let batch: LevelBatch | null = null;
    try {
      const making = db.batch();
      batch = making;
      if (this.meta === undefined) making.put<Uint8Array, Uint8Array>(META_KEY, META_VALUE, VIEW);
      values.forEach((value, n) => making.put<Uint8Array, Uint8Array>(recordKey(from + n), value, VIEW));
      this.appended = true;
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
      const failure = levelFailure(this.name, e, 'level');
      this.stop(failure);
      throw failure;
    }
    this.meta ??= META_VALUE;
    this.lastValue = values[values.length - 1] as Uint8Array;
  }

  /** The records up to `to` or the head now (later appends are not read), a chunk at a time. */
  protected async *_read(from: Position, to: Position | undefined): AsyncGenerator<R[]> {
    const end = Math.min(to ?? this.head, this.head);
    if (this.db === null || !(from < end)) return;
    let position = from;
    for await (const entries of readAhead(this.name, iterate(this.db, this.name, recordKey(from), recordKey(end)))) {
      const records: R[] = [];
      for (const [key, value] of entries) {
        checkKey(this.name, key, position);
        records.push(decodeValue(this.name, this.codec, key, value, position, this.version !== 1));
        position++;
      }
      yield records;
    }
    if (position < end)
      throw new DamagedError(
        this.name,
        position + 1,
        `record ${position + 1} is missing: the records end before the head, ${end}`,
      );
  }

  /** The last value: at hand when this log wrote it (a read model asks after every append), else read back. */
  protected _storedLast(): Uint8Array | Promise<Uint8Array | undefined> {
    return this.lastValue ?? this.valueAt(this.head - 1);
  }

  /**
   * Closes the database (a folder's; a caller's is left open), with the folder's marker written
   * first when this open appended: its head and last record, for the next open to check.
   */
  protected async _close(): Promise<void> {
    this.closeFiles();
    const db = this.db;
    let witness: unknown = null;
    try {
      if (db === null || !this.ownsDb) return;
      if (this.folder !== null && this.appended && this.stoppedBy === null) {
        // while LevelDB's lock is held: no other writer can be writing the marker
        try {
          const { position, fingerprint } = await this._resumePoint();
          writeMarker(this.folder, { ...FOLDER_MARKER, head: position, fingerprint });
        } catch (e) {
          witness = e;
        }
      }
      try {
        await db.close();
        /* c8 ignore next -- the folder's database is classic-level's, whose close never fails; kept so that any failure is a LedgerError */
      } catch (e) {
        throw new LedgerIoError(this.name, causeOf(e));
      }
    } finally {
      if (this.snapshot !== null) removeSnapshot(this.snapshot);
      this.release();
    }
    // The records are durable whatever became of the marker; its failure is said all the same.
    if (witness !== null) throw witness;
  }
}

/**
 * Where the iterator reads on from, once the records from `from` to `position` - 1 were taken:
 * the first key after the last of them (a key that is not a record's may be next).
 */
const keyAfterTaken = (from: Position, position: Position): Uint8Array =>
  position === from ? recordKey(from) : Uint8Array.of(...recordKey(position - 1), 0);

/** Damage unless `key` is the key of the record at `position`. */
function checkKey(name: string, key: Uint8Array, position: Position): void {
  const found = positionOf(key);
  if (found === position) return;
  if (found === null)
    throw new DamagedError(
      name,
      position + 1,
      `where record ${position + 1} should be is the key ${hex(key)}, which is not a record's`,
    );
  throw new DamagedError(name, position + 1, `record ${position + 1} is missing: the next record is ${found + 1}`);
}

/** The version a format marker names; damage unless it is ledgerstore's, of a version this one reads. */
function checkMarker(name: string, value: Uint8Array): number {
  let marker: unknown;
  try {
    marker = decoder.decode(value);
  } catch {
    marker = undefined;
  }
  const { format, version } = (typeof marker === 'object' && marker !== null ? marker : {}) as {
    format?: unknown;
    version?: unknown;
  };
  if (format !== FORMAT)
    throw new DamagedError(name, 0, `the format marker is not ledgerstore's (${hex(value.subarray(0, 32))})`);
  if (typeof version !== 'number' || !READS.includes(version)) {
    throw new DamagedError(
      name,
      0,
      `the log is in version ${String(version)} of the format, which this ledgerstore does not read (it reads versions ${READS.join(' and ')})`,
    );
  }
  return version;
}
