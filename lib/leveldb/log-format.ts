/**
 * LevelDB's log format, read as LevelDB 1.20 (the one classic-level 3 bundles; `version.ts`)
 * writes it: its write-ahead logs (`NNNNNN.log`) and its manifest (`MANIFEST-NNNNNN`), so that a
 * folder can be checked before LevelDB opens it (`folder.ts`). LevelDB's reader drops a damaged
 * block of its write-ahead log with every batch after it in the block; this one says where.
 * Reads bytes, changes nothing.
 *
 * From LevelDB's `doc/log_format.md` and its sources:
 *
 * - **The log format**: 32 KiB blocks of physical records, each `crc (4, LE) | length (2, LE) |
 *   type (1) | data`, the CRC-32C of the type and the data, masked. A record that does not fit
 *   in a block is cut into a first, middle ... last fragment; a block's last 1 to 6 bytes, too
 *   few for a header, are zeros.
 * - **A write batch** (a write-ahead log's logical record): `sequence (8, LE) | count (4, LE) |
 *   operations`; the batches of a log number their operations consecutively.
 *
 * @module
 */
import { Cursor, u32, u64 } from './bytes.js';
import { crc32c, unmask } from './crc32c.js';

const BLOCK = 32 * 1024;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const LAST = 4;

/** A logical record of a file in the log format, and where its first fragment starts. */
export interface LogRecord {
  readonly offset: number;
  readonly data: Uint8Array;
}

/** What is wrong in a file in the log format, and where (the byte offset). */
export interface LogDamage {
  readonly offset: number;
  readonly why: string;
}

/** A file in the log format, read through. */
export interface LogScan {
  /** The whole logical records, in order. */
  readonly records: readonly LogRecord[];
  /**
   * Bytes that are not whole records, followed by a whole record (or the start of one): data
   * that LevelDB's reader would drop, with writes after it kept. `null` when there is none.
   */
  readonly hole: LogDamage | null;
  /**
   * Bytes at the end that are not whole records, with nothing whole after them: what a writer
   * that died (or a power loss) leaves of its last writes. `null` when the file ends whole.
   */
  readonly tail: LogDamage | null;
}

/** The physical record at `at`, when one is there and its checksum holds; else why not. */
function physicalAt(bytes: Uint8Array, at: number): { type: number; data: Uint8Array } | string {
  const room = BLOCK - (at % BLOCK);
  if (at + HEADER > bytes.length) return 'a header cut off at the end of the file';
  const length = (bytes[at + 4] as number) | ((bytes[at + 5] as number) << 8);
  const type = bytes[at + 6] as number;
  if (type === 0 && length === 0) return 'zeros where a record should be';
  if (HEADER + length > room) return `a record of ${length} bytes, longer than its block holds`;
  if (at + HEADER + length > bytes.length) return 'a record cut off at the end of the file';
  const expected = unmask(u32(bytes, at));
  const actual = crc32c(bytes.subarray(at + HEADER, at + HEADER + length), crc32c(bytes.subarray(at + 6, at + 7)));
  if (actual !== expected) return 'a record whose checksum does not match';
  if (type < FULL || type > LAST) return `a record of unknown type ${type}`;
  return { type, data: bytes.subarray(at + HEADER, at + HEADER + length) };
}

/**
 * Reads a file in the log format through, as LevelDB's reader does, and says where it is not
 * whole: a hole (bad bytes with a record after them) or a tail (bad bytes at the end). After
 * bad bytes, a record is looked for where LevelDB's writer could have put the next one: after
 * the bad record if its length fits its block, and at each later block's start; only a valid
 * first or whole record there counts (a middle or last fragment is the rest of the record the
 * bad bytes started, as a write cut short leaves it).
 */
export function scanLog(bytes: Uint8Array): LogScan {
  const records: LogRecord[] = [];
  /** The fragments of the record being read, from its first; `null` between records. */
  let fragments: Uint8Array[] | null = null;
  let fragmentStart = 0;
  let bad: LogDamage | null = null;
  let at = 0;
  while (at < bytes.length) {
    const room = BLOCK - (at % BLOCK);
    if (room < HEADER) {
      at += room; // a block's trailer
      continue;
    }
    const found = physicalAt(bytes, at);
    if (typeof found === 'string') {
      bad ??= { offset: fragments === null ? at : fragmentStart, why: found };
      fragments = null;
      const length = (bytes[at + 4] ?? 0) | ((bytes[at + 5] ?? 0) << 8);
      // where the next record would start if the length is right, else the next block
      const lengthFits = !found.startsWith('zeros') && !found.includes('cut off') && HEADER + length < room;
      at = lengthFits ? at + HEADER + length : at + room;
      continue;
    }
    const { type, data } = found;
    const start = at;
    at += HEADER + data.length;
    if (type === FULL || type === FIRST) {
      if (fragments !== null) bad ??= { offset: fragmentStart, why: 'a record whose last fragment is missing' };
      if (bad !== null) return { records, hole: bad, tail: null };
      if (type === FULL) records.push({ offset: start, data });
      else {
        fragments = [data];
        fragmentStart = start;
      }
    } else if (fragments === null) {
      // the rest of a record whose start is missing: after bad bytes, the record they started
      bad ??= { offset: start, why: 'a fragment of a record whose start is missing' };
    } else {
      fragments.push(data);
      if (type === LAST) {
        records.push({ offset: fragmentStart, data: Buffer.concat(fragments) });
        fragments = null;
      }
    }
  }
  if (fragments !== null) bad ??= { offset: fragmentStart, why: 'a record whose last fragment is missing' };
  return { records, hole: null, tail: bad };
}

/** A write batch's first sequence number and its count of operations; `null` when it is too short to be one. */
export function batchSequence(record: Uint8Array): { readonly sequence: number; readonly count: number } | null {
  if (record.length < 12) return null;
  return { sequence: u64(record, 0), count: u32(record, 8) };
}

/**
 * A write batch's operations in order: each key, and the value it puts (`null` for a deletion).
 * @throws RangeError when the batch does not decode
 */
export function batchOperations(record: Uint8Array): [key: Uint8Array, value: Uint8Array | null][] {
  const cursor = new Cursor(record.subarray(12));
  const operations: [Uint8Array, Uint8Array | null][] = [];
  while (!cursor.done) {
    const tag = cursor.bytes[cursor.at++];
    if (tag !== 0 && tag !== 1) throw new RangeError(`an operation of unknown type ${String(tag)}`);
    const key = cursor.slice();
    operations.push([key, tag === 1 ? cursor.slice() : null]);
  }
  return operations;
}

/**
 * The keys a write batch puts (its deletions left out), in order.
 * @throws RangeError when the batch does not decode
 */
export function batchPuts(record: Uint8Array): Uint8Array[] {
  return batchOperations(record).flatMap(([key, value]) => (value === null ? [] : [key]));
}
