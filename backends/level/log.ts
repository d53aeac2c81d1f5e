/**
 * A LevelDB log (`index.ts` documents its format, writes and folder): opened in a folder
 * (prepared by `folder.ts`) or in a database the caller made, read through at open by the
 * database's iterator, bounded to the record keys, and appended to in synced batches.
 *
 * @module
 */
import { writeMarker } from '../../lib/database-folder.js';
import { classicLevel } from '../../lib/dependencies.js';
import { DamagedError, LedgerIoError, OldFormatError } from '../../lib/errors.js';
import { assertNotInUse, reserveFolder, withFolderLocked } from '../../lib/folder-lock.js';
import { removeSnapshot } from '../../lib/folder-snapshot.js';
import { causeOf, levelFailure } from '../../lib/level-failure.js';
import type { ScannedLines } from '../../lib/line-scan.js';
import type { LogCapabilities, OpenOptions, Position, RecordCodec, ResumePoint } from '../../lib/log.js';
import { StoredLog } from '../../lib/log-base.js';
import { sealedBodyEnd } from '../../lib/sealed-value.js';
import type { ValueScan } from '../../lib/value-scan.js';
import { iterate, type LevelBatch, type LevelDatabase, readAhead, type ValuesOnly, VIEW } from './database.js';
import { type ClosedAt, checkClosedAt, prepareFolder } from './folder.js';
import { checkKey, checkMarker, FOLDER_MARKER, META_KEY, metaValue, VERSION } from './format.js';
import { RECORD_KEY_LENGTH, RECORDS_END, recordKey, writeRecordKey } from './keys.js';
import { checksumAt, decodeValue, encodeRecord, sealed } from './values.js';

const SYNC = { sync: true } as const;
/** How the read-through at open reads values for the codec's value scan: no keys, past the block cache (each block is read once). */
const VALUES_ONLY: ValuesOnly = { keys: false, fillCache: false };

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

/** Where a LevelDB log is: a folder, or a database the caller made. */
export type Place = { readonly folder: string } | { readonly db: LevelDatabase };

/** A LevelDB log, opened by {@link LevelLog.open}. */
export class LevelLog<R> extends StoredLog<R> {
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
    const classic = new (classicLevel().ClassicLevel)<Uint8Array, Uint8Array>(prepared.location, {
      keyEncoding: 'view',
      valueEncoding: 'view',
    });
    try {
      await classic.open({ createIfMissing: prepared.open === 'create' });
    } catch (e) {
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
    const head = yield* scan === undefined ? this.decodedFrom(db, from) : this.scannedFrom(db, from, scan);
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
      if (this.meta === undefined) making.put<Uint8Array, Uint8Array>(META_KEY, metaValue(), VIEW);
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
    this.meta ??= metaValue();
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
