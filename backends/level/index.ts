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
 *   (`values.ts`), so every u64 turn round-trips, and the bytes of every value written
 *   before are the same (version 2 still).
 * - Read back, a value's checksum is checked, the record decoded and passed through
 *   `codec.normalize`, which checks it and copies it: a Honcho record so re-encodes
 *   (`codec.encode`) to the same canonical line that the JSONL backend writes. A value that does
 *   not match its checksum, does not decode or does not normalize is damage. The read-through
 *   at open of a codec with a value scan (`value-scan.ts`; the Honcho codec's checks the
 *   canonical CBOR byte by byte) reads the values alone through the database's iterator
 *   (classic-level's, for a folder: the one read path), bounded to the record keys, and hands
 *   the scan those that match their checksums, a chunk at a time; from the first that does not,
 *   it reads keys and values as above, so that damage is told the same way.
 * - The format marker is written with the first batch, in the same write: a database with no
 *   records has no keys at all. A marker of another format, or of a version this one does not
 *   know, stops the open (damage at "record 0", the marker), so that this version never
 *   misreads, or appends to, a log that a later version wrote.
 *
 * **Version 1** (ledgerstore 0.1) is version 2 without the checksum: a value is the record's
 * CBOR alone. This version reads it (a reader, `verify`, `copy`), and refuses to append to it
 * (`OldFormatError`), since a log half in one version and half in the other would read as
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
 *   known. Every later append is refused (`StoppedError`) until the log is reopened, which
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
 *   this process or another, is refused with `LockedError`, and so is a read-only one while
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
 * folder is looked at first, from its files alone (`lib/leveldb/folder.ts`), and LevelDB is handed only
 * a folder that is missing or empty, or that holds an intact ledger:
 *
 * - A writable open of a missing or empty folder creates it (mode 0700; its parent must exist,
 *   as a JSONL file's directory must, and is synced), writes the marker file `LEDGERSTORE`
 *   (`{"format": "ledgerstore/level", "version": 2}`), then lets LevelDB create the database. A
 *   folder holding anything else is refused and left as it is: other files, or a read model
 *   (`ForeignFolderError`); LevelDB files without `CURRENT`, a manifest that does not read,
 *   a table missing or cut, a write-ahead log with a hole (a damaged batch with later batches
 *   kept: acknowledged batches LevelDB would drop), any table whose blocks do not match their
 *   checksums (every table is checked at every open, as LevelDB's `verify_checksums` would, which
 *   classic-level does not turn on) (`LevelFolderDamagedError`). The look reads LevelDB's
 *   files as LevelDB 1.20 (classic-level 3.0.0) writes them: under another classic-level, every
 *   folder is refused unread (`LevelDbVersionError`, `lib/leveldb/version.ts`).
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
 * The files of this folder: the log (`log.ts`), a folder's preparation before LevelDB opens it
 * (`folder.ts`), the format's marker and key checks (`format.ts`), the values (`values.ts`), the
 * keys (`keys.ts`), the database's interface (`database.ts`).
 *
 * @module
 */
import type { LogBackend, LogCapabilities, RecordCodec } from '../../lib/log.js';
import type { LevelDatabase } from './database.js';
import { LevelLog } from './log.js';

export { levelFolder } from '../../lib/leveldb/folder.js';
export type { ByteEncodings, ByteRange, LevelBatch, LevelDatabase, LevelIterator } from './database.js';

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
