/**
 * A LevelDB log's records read from the folder's files (`level-files.ts` reads their formats)
 * rather than through classic-level's iterator, which makes a buffer of each value: the live
 * tables' data blocks are decompressed end to end into one chunk buffer, and the values are
 * handed to the codec's value scan where they lie, the write-ahead logs' puts after them.
 * LevelDB still opens the folder (its consistency checks, its lock); its iterator is not used
 * for the read-through.
 *
 * What LevelDB's iterator would give is what the files give when no key of the records' key
 * space (`0x01` ...) is in two of them (two tables, or a table and the write-ahead logs): each
 * key's newest entry is then in its one file, first among its entries (a table sorts a key's
 * entries newest first; the logs are read in order). That is how a ledger's folder is, its keys
 * written in order and never again; a folder where it is not (overlapping tables of a level 0,
 * keys written again) is read through the iterator ({@link RecordFiles.open} gives `null`).
 * Whatever else is out of the ordinary (a key that is not a record's, a position missing, a
 * value that does not match its checksum, a block that does not read) ends the read from the
 * files at the position it is at, and the iterator reads from there on, with its words for what
 * is wrong.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LedgerIoError } from '../lib/errors.js';
import {
  batchOperations,
  batchSequence,
  blockLength,
  crc32c,
  dataBlockHandles,
  readBlockInto,
  sealedBodyEndAt,
} from '../lib/level-files.js';
import type { LiveFiles } from '../lib/level-folder.js';
import type { Position } from '../lib/log.js';
import {
  positionAt,
  positionOf,
  RECORD_KEY_LENGTH,
  RECORD_PREFIX,
  RECORDS_END,
  recordKey,
  writeRecordKey,
} from './level-keys.js';

/** LevelDB's internal key: the user's key, then 8 bytes of (sequence << 8 | type), little-endian. */
const TRAILER = 8;
const DELETION = 0;
/** The bytes of blocks a chunk holds before it is handed on (about 3,500 records). */
const CHUNK_BYTES = 512 * 1024;

/** Values laid out for the codec's value scan: the n-th record's CBOR at `bytes[starts[n], ends[n])`, its checksum after it. */
export interface RecordChunk {
  readonly bytes: Buffer;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly count: number;
  /** The position of the first. */
  readonly first: Position;
}

/** A file of the folder that may hold records (a table, or the write-ahead logs), and the range of record keys it may hold. */
interface Range {
  readonly low: Uint8Array;
  readonly high: Uint8Array;
}

/** A table, to be opened. */
interface TableRange extends Range {
  readonly name: string;
  readonly size: number;
}

/** A table held open (`fd`; `file`, its path), or the write-ahead logs (`fd` `null`). */
interface Source extends Range {
  readonly fd: number | null;
  readonly file: string;
  readonly size: number;
}

/** The write-ahead logs' last word on each record key they write: the value, or `null` for a deletion. */
type LogWrites = Map<Position, Uint8Array | null>;

/**
 * The write-ahead logs' writes to record keys, or `null` when a batch does not decode whole,
 * or writes a key of the records' key space that is not a record's (the iterator's to read).
 */
function logWrites(live: LiveFiles): LogWrites | null {
  const writes: LogWrites = new Map();
  for (const { scan } of live.logs) {
    for (const { data } of scan.records) {
      const batch = batchSequence(data);
      let operations: [Uint8Array, Uint8Array | null][];
      try {
        operations = batchOperations(data);
      } catch {
        return null;
      }
      if (batch === null || operations.length !== batch.count) return null;
      for (const [key, value] of operations) {
        if (key[0] !== RECORD_PREFIX) continue;
        const position = positionOf(key);
        if (position === null) return null;
        writes.set(position, value);
      }
    }
  }
  return writes;
}

const RECORDS_LOW = Uint8Array.of(RECORD_PREFIX);
const larger = (a: Uint8Array, b: Uint8Array): Uint8Array => (Buffer.compare(a, b) >= 0 ? a : b);
const smaller = (a: Uint8Array, b: Uint8Array): Uint8Array => (Buffer.compare(a, b) <= 0 ? a : b);

/**
 * A folder's records, to be read from its files: its live tables held open (so that a
 * compaction of LevelDB's that deletes them changes nothing here) and its write-ahead logs'
 * writes. Closed by {@link RecordFiles.close}.
 */
export class RecordFiles {
  private constructor(
    /** Sorted by their keys, none overlapping another; none once closed. */
    private sources: readonly Source[],
    private readonly logs: LogWrites,
  ) {}

  /**
   * The records of the folder whose live files are `live` (found by `inspectFolder`), to be read
   * from its files; `null` when two of them may hold the same record key, or the logs hold what
   * is not a record's write (the iterator's to read). Call it while the folder is locked, so that
   * the tables opened are the live ones.
   * @throws {@link LedgerIoError} when a table cannot be opened
   */
  static open(folder: string, live: LiveFiles): RecordFiles | null {
    const logs = logWrites(live);
    if (logs === null) return null;
    const candidates: (TableRange | (Range & { readonly logs: true }))[] = [];
    for (const { name, size, smallest, largest } of live.tables.values()) {
      // the table's range within the records' key space, if it meets it
      if (Buffer.compare(largest, RECORDS_LOW) < 0 || Buffer.compare(smallest, RECORDS_END) >= 0) continue;
      candidates.push({ name, size, low: larger(smallest, RECORDS_LOW), high: smaller(largest, RECORDS_END) });
    }
    if (logs.size > 0) {
      let low = Infinity;
      let high = -1;
      for (const position of logs.keys()) {
        low = Math.min(low, position);
        high = Math.max(high, position);
      }
      candidates.push({ logs: true, low: recordKey(low), high: recordKey(high) });
    }
    candidates.sort((a, b) => Buffer.compare(a.low, b.low));
    for (let n = 1; n < candidates.length; n++) {
      if (Buffer.compare((candidates[n] as Range).low, (candidates[n - 1] as Range).high) <= 0) return null;
    }
    const sources: Source[] = [];
    try {
      for (const candidate of candidates) {
        if ('logs' in candidate) {
          sources.push({ ...candidate, fd: null, file: folder, size: 0 });
          continue;
        }
        const file = path.join(folder, candidate.name);
        try {
          sources.push({
            low: candidate.low,
            high: candidate.high,
            size: candidate.size,
            file,
            fd: fs.openSync(file, 'r'),
          });
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          // more tables than the process may hold open: the iterator reads them as LevelDB holds them
          if (code === 'EMFILE' || code === 'ENFILE') {
            new RecordFiles(sources, logs).close();
            return null;
          }
          throw new LedgerIoError(file, e);
        }
      }
    } catch (e) {
      new RecordFiles(sources, logs).close();
      throw e;
    }
    return new RecordFiles(sources, logs);
  }

  /** Closes the tables. */
  close(): void {
    for (const { fd } of this.sources) {
      if (fd !== null) fs.closeSync(fd);
    }
    this.sources = [];
  }

  /**
   * The records from `from` on, in chunks, each value checked against its checksum under its
   * position's key; gives where the read stopped and whether it read every record there is
   * (`whole`), or stopped at something the iterator is to read (then `position` is the first
   * record it did not take).
   * @throws {@link LedgerIoError} when a table cannot be read
   */
  *chunks(from: Position): Generator<RecordChunk, { readonly position: Position; readonly whole: boolean }> {
    const reader = new ChunkReader(from);
    for (const source of this.sources) {
      const going = source.fd === null ? yield* reader.takeLogs(this.logs) : yield* reader.takeTable(source, source.fd);
      if (!going) {
        if (reader.count > 0) yield reader.flush();
        return { position: reader.position, whole: false };
      }
    }
    if (reader.count > 0) yield reader.flush();
    return { position: reader.position, whole: true };
  }
}

/** The chunk being filled, and where the read is. */
class ChunkReader {
  bytes = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Where the next block goes in {@link bytes}. */
  at = 0;
  starts = new Int32Array(4096);
  ends = new Int32Array(4096);
  count = 0;
  /** The position of the first record of the chunk. */
  first: Position;
  /** The position of the next record to take. */
  position: Position;
  /** The record key being read, with its trailer (a table's keys share prefixes with the key before). */
  private key = new Uint8Array(64);
  /** The record key of {@link position}, as its checksum covers it. */
  private readonly recordKey = new Uint8Array(RECORD_KEY_LENGTH);
  /** The checksum of a record under {@link recordKey}, its body where it lies. */
  private readonly crcOf = (bytes: Uint8Array, start: number, end: number): number =>
    crc32c(bytes, crc32c(this.recordKey), start, end);

  constructor(from: Position) {
    this.first = from;
    this.position = from;
  }

  /** The chunk filled so far, handed on; a new one started. */
  flush(room = CHUNK_BYTES): RecordChunk {
    const chunk = { bytes: this.bytes, starts: this.starts, ends: this.ends, count: this.count, first: this.first };
    this.bytes = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, room));
    this.at = 0;
    this.starts = new Int32Array(this.starts.length);
    this.ends = new Int32Array(this.ends.length);
    this.count = 0;
    this.first = this.position;
    return chunk;
  }

  /**
   * Takes the value at `bytes[start, end)` as the record of `position`: whether it is the next
   * one, and matches its checksum under its key. `false` ends the read from the files.
   */
  private take(position: Position, start: number, end: number): boolean {
    if (position !== this.position) return false;
    writeRecordKey(this.recordKey, position);
    const at = sealedBodyEndAt(this.bytes, start, end, this.crcOf);
    if (typeof at !== 'number') return false;
    if (this.count === this.starts.length) {
      const starts = new Int32Array(2 * this.count);
      starts.set(this.starts);
      this.starts = starts;
      const ends = new Int32Array(2 * this.count);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.starts[this.count] = start;
    this.ends[this.count] = at;
    this.count++;
    this.position++;
    return true;
  }

  /** Takes the write-ahead logs' records, copied into the chunk: whether the read goes on. */
  *takeLogs(logs: LogWrites): Generator<RecordChunk, boolean> {
    const positions = [...logs.keys()].sort((a, b) => a - b);
    for (const position of positions) {
      const value = logs.get(position) ?? null;
      if (value === null || position < this.position) continue; // a deletion, or before `from`
      if (this.at + value.length > this.bytes.length) yield this.flush(value.length);
      this.bytes.set(value, this.at);
      this.at += value.length;
      if (!this.take(position, this.at - value.length, this.at)) return false;
    }
    return true;
  }

  /** Takes a table's records, its blocks read into the chunk: whether the read goes on. */
  *takeTable(source: Source, fd: number): Generator<RecordChunk, boolean> {
    const table = Buffer.allocUnsafe(source.size);
    try {
      let read = 0;
      while (read < source.size) {
        const n = fs.readSync(fd, table, read, source.size - read, read);
        if (n === 0) break;
        read += n;
      }
      if (read < source.size) return false; // cut since the open checked it: the iterator's to say
    } catch (e) {
      throw new LedgerIoError(source.file, e);
    }
    const handles = dataBlockHandles(table);
    if (typeof handles === 'string') return false;
    /** The position of the last key read: a key's older entries after its newest are skipped. */
    let last = -1;
    for (const handle of handles) {
      const length = blockLength(table, handle);
      if (typeof length === 'string') return false;
      if (this.at + length > this.bytes.length) yield this.flush(length);
      const start = this.at;
      if (!readBlockInto(table, handle, this.bytes, start)) return false;
      const end = start + length;
      this.at = end;
      const b = this.bytes;
      if (length < 4) return false;
      const restarts = (b[end - 4] as number) | ((b[end - 3] as number) << 8) | ((b[end - 2] as number) << 16);
      const entriesEnd = end - 4 * (restarts + 1);
      if (entriesEnd < start || (b[end - 1] as number) !== 0) return false;
      let i = start;
      while (i < entriesEnd) {
        // three varints: the bytes shared with the key before, the bytes not, the value's length
        const shared = b[i++] as number;
        if (shared > 0x7f) return false; // a record's internal key is 17 bytes: never a longer varint
        const unshared = b[i++] as number;
        if (unshared > 0x7f) return false;
        let valueLength = 0;
        for (let scale = 1; ; scale *= 128) {
          const byte = b[i++];
          if (byte === undefined || i > entriesEnd || scale > 2 ** 28) return false;
          valueLength += (byte & 0x7f) * scale;
          if ((byte & 0x80) === 0) break;
        }
        const keyLength = shared + unshared;
        if (keyLength < TRAILER || keyLength > this.key.length || i + unshared + valueLength > entriesEnd) return false;
        const key = this.key;
        for (let k = 0; k < unshared; k++) key[shared + k] = b[i + k] as number;
        i += unshared;
        const valueStart = i;
        i += valueLength;
        const userLength = keyLength - TRAILER;
        if (userLength === 0 || (key[0] as number) < RECORD_PREFIX) continue; // the format marker
        if ((key[0] as number) > RECORD_PREFIX) return true; // past the records' key space: no record after it
        const position = positionAt(key, 0, userLength);
        if (position === null) return false;
        if (position === last) continue; // an older entry of the key just read
        last = position;
        if (key[userLength] === DELETION || position < this.position) continue;
        if (!this.take(position, valueStart, i)) return false;
      }
    }
    return true;
  }
}
