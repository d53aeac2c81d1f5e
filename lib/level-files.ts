/**
 * LevelDB's own files, read as LevelDB 1.20 (the one classic-level 3 bundles) writes them, so
 * that a folder can be checked before LevelDB opens it: LevelDB's open changes the folder (it
 * renames its info log, folds its write-ahead log into a table, writes a new manifest) even
 * when it then fails, and it reads damage as data (a damaged block of its write-ahead log is
 * dropped with every batch after it in the block; a table's block checksums are checked only
 * on reads that ask, which classic-level's never do). Everything here reads bytes and changes
 * nothing.
 *
 * The formats, from LevelDB's `doc/log_format.md`, `doc/table_format.md` and its sources:
 *
 * - **The log format** (write-ahead logs `NNNNNN.log`, and the `MANIFEST-NNNNNN`): 32 KiB blocks
 *   of physical records, each `crc (4, LE) | length (2, LE) | type (1) | data`, the CRC-32C of
 *   the type and the data, masked. A record that does not fit in a block is cut into a first,
 *   middle ... last fragment; a block's last 1 to 6 bytes, too few for a header, are zeros.
 * - **A write batch** (a write-ahead log's logical record): `sequence (8, LE) | count (4, LE) |
 *   operations`; the batches of a log number their operations consecutively.
 * - **A version edit** (a manifest's logical record): tagged fields, among them the number of
 *   the write-ahead log that starts the unflushed writes, and the tables added and removed.
 * - **A table** (`NNNNNN.ldb`, or `.sst` from older versions): blocks, each followed by a
 *   compression type (1) and a masked CRC-32C of the block and its type (4, LE); an index block
 *   of handles (offset, size) of the data blocks; a 48-byte footer with the handles of the
 *   index and meta-index blocks and a magic number. Blocks may be Snappy-compressed.
 *
 * Beside them, how ledgerstore's own values carry their CRC-32C in LevelDB ({@link sealValue}):
 * one checksum function, and one way to seal with it, for a ledger's records and a read model's
 * rows.
 *
 * @module
 */

/** CRC-32C (Castagnoli) lookup tables, for slicing by 8 bytes. */
const TABLES = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let s = 1; s < 8; s++) {
      const previous = t[(s - 1) * 256 + n] as number;
      t[s * 256 + n] = (previous >>> 8) ^ (t[previous & 0xff] as number);
    }
  }
  return t;
})();

/** The CRC-32C of `bytes` (of `bytes[from, to)`), continuing `crc` (the CRC of what came before them). */
export function crc32c(bytes: Uint8Array, crc = 0, from = 0, to = bytes.length): number {
  const t = TABLES;
  let c = ~crc;
  let i = from;
  const n = to;
  for (; i + 8 <= n; i += 8) {
    const low =
      c ^
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24));
    c =
      (t[1792 + (low & 0xff)] as number) ^
      (t[1536 + ((low >>> 8) & 0xff)] as number) ^
      (t[1280 + ((low >>> 16) & 0xff)] as number) ^
      (t[1024 + (low >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < n; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

// -- ledgerstore's values ----------------------------------------------------------------------

/** The head of a value's checksum: a CBOR byte string of 4 bytes. */
const CHECKSUM_HEAD = 0x44;
/** How many bytes a value's checksum takes, its head included. */
export const CHECKSUM_LENGTH = 5;

/**
 * A value of ledgerstore's own (a ledger's record, a read model's row) as it is stored in
 * LevelDB: its CBOR `body`, then `crc` (the CRC-32C of what its owner checks: the key and the
 * body) as a CBOR byte string of 4 bytes, `0x44` and the CRC big-endian. A CBOR sequence
 * (RFC 8742) of two data items, which any CBOR library reads.
 */
export function sealValue(body: Uint8Array, crc: number): Uint8Array {
  const value = new Uint8Array(body.length + CHECKSUM_LENGTH);
  value.set(body);
  sealAt(value, body.length, crc);
  return value;
}

/**
 * Writes the checksum `crc` of a body that ends at `end` of `target` right after it (room for
 * {@link CHECKSUM_LENGTH} bytes there): {@link sealValue} in a buffer of the caller's.
 */
export function sealAt(target: Uint8Array, end: number, crc: number): void {
  target[end] = CHECKSUM_HEAD;
  target[end + 1] = crc >>> 24;
  target[end + 2] = (crc >>> 16) & 0xff;
  target[end + 3] = (crc >>> 8) & 0xff;
  target[end + 4] = crc & 0xff;
}

/**
 * Where the body of a value {@link sealValue} made ends (the body is `value[0, end)`), checked:
 * `crcOf(value, end)`, the CRC of what its owner checks, must be the CRC the value ends with.
 * What is wrong otherwise: no checksum at its end, or one that does not match. For a reader that
 * checks values where they lie, without a view of each body.
 */
export function sealedBodyEnd(
  value: Uint8Array,
  crcOf: (value: Uint8Array, end: number) => number,
): number | 'no checksum' | 'mismatch' {
  return sealedBodyEndAt(value, 0, value.length, (bytes, _start, end) => crcOf(bytes, end));
}

/**
 * {@link sealedBodyEnd} of the value at `bytes[start, end)`, where it lies among others: where its
 * body ends in `bytes`, checked with `crcOf(bytes, start, bodyEnd)`.
 */
export function sealedBodyEndAt(
  bytes: Uint8Array,
  start: number,
  end: number,
  crcOf: (bytes: Uint8Array, start: number, end: number) => number,
): number | 'no checksum' | 'mismatch' {
  const at = end - CHECKSUM_LENGTH;
  if (at - start < 1 || bytes[at] !== CHECKSUM_HEAD) return 'no checksum';
  const stored =
    (((bytes[at + 1] as number) << 24) |
      ((bytes[at + 2] as number) << 16) |
      ((bytes[at + 3] as number) << 8) |
      (bytes[at + 4] as number)) >>>
    0;
  return crcOf(bytes, start, at) === stored ? at : 'mismatch';
}

/**
 * The body of a value {@link sealValue} made, checked: `crcOf` of the body must be the CRC it
 * ends with. What is wrong otherwise: no checksum at its end, or one that does not match.
 */
export function unsealValue(
  value: Uint8Array,
  crcOf: (body: Uint8Array) => number,
): Uint8Array | 'no checksum' | 'mismatch' {
  const end = sealedBodyEnd(value, (v, at) => crcOf(v.subarray(0, at)));
  return typeof end === 'number' ? value.subarray(0, end) : end;
}

// -- LevelDB's files -----------------------------------------------------------------------------

/** LevelDB stores a CRC masked, so that the CRC of bytes that hold CRCs is not degenerate. */
function unmask(masked: number): number {
  const rotated = (masked - 0xa282ead8) >>> 0;
  return ((rotated >>> 17) | (rotated << 15)) >>> 0;
}

const BLOCK = 32 * 1024;
const HEADER = 7;
const FULL = 1;
const FIRST = 2;
const LAST = 4;

const u32 = (b: Uint8Array, at: number): number =>
  ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16)) +
  (b[at + 3] as number) * 0x100_0000;
const u64 = (b: Uint8Array, at: number): number => u32(b, at) + u32(b, at + 4) * 0x1_0000_0000;

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

/** A reader of LevelDB's varints and length-prefixed strings. */
class Cursor {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let n = 0; n < 10; n++) {
      const byte = this.bytes[this.at++];
      if (byte === undefined) throw new RangeError('a varint cut off');
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new RangeError('a varint longer than 10 bytes');
  }

  slice(): Uint8Array {
    const length = this.varint();
    if (this.at + length > this.bytes.length) throw new RangeError('a string cut off');
    const out = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return out;
  }
}

/** The user's key of an internal key (the user's key, then 8 bytes of sequence and type). */
const userKeyOf = (internal: Uint8Array): Uint8Array => internal.subarray(0, Math.max(0, internal.length - 8));

/** What a manifest says of the database: its comparator, write-ahead logs and tables. */
export interface Manifest {
  readonly comparator: string | null;
  /** The first write-ahead log whose writes are not all in tables; older logs are obsolete. */
  readonly logNumber: number;
  /** A log an older LevelDB may still need (0: none). */
  readonly prevLogNumber: number;
  /** The live tables by number: size in bytes, and the smallest and largest keys (LevelDB's user keys) each holds. */
  readonly tables: ReadonlyMap<
    number,
    { readonly size: number; readonly smallest: Uint8Array; readonly largest: Uint8Array }
  >;
}

/**
 * The manifest's version edits, applied in order, as LevelDB recovers them.
 * @throws RangeError saying what is wrong, when an edit does not decode
 */
export function readManifest(records: readonly LogRecord[]): Manifest {
  let comparator: string | null = null;
  let logNumber = 0;
  let prevLogNumber = 0;
  const seen = new Set<number>();
  const live = new Map<string, { number: number; size: number; smallest: Uint8Array; largest: Uint8Array }>();
  for (const { data, offset } of records) {
    const edit = new Cursor(data);
    try {
      while (!edit.done) {
        const tag = edit.varint();
        seen.add(tag);
        if (tag === 1) comparator = Buffer.from(edit.slice()).toString('latin1');
        else if (tag === 2) logNumber = edit.varint();
        else if (tag === 3 || tag === 4)
          edit.varint(); // the next file number, the last sequence
        else if (tag === 5) {
          edit.varint();
          edit.slice(); // a compaction pointer
        } else if (tag === 6) {
          const level = edit.varint();
          live.delete(`${level}:${edit.varint()}`);
        } else if (tag === 7) {
          const level = edit.varint();
          const number = edit.varint();
          const size = edit.varint();
          // internal keys: the user's key, then 8 bytes of sequence and type
          const smallest = edit.slice();
          const largest = edit.slice();
          live.set(`${level}:${number}`, { number, size, smallest: userKeyOf(smallest), largest: userKeyOf(largest) });
        } else if (tag === 9) prevLogNumber = edit.varint();
        else throw new RangeError(`an unknown tag ${tag}`);
      }
    } catch (e) {
      throw new RangeError(`the version edit at byte ${offset} does not decode (${(e as Error).message})`);
    }
  }
  // what LevelDB's recovery requires of a manifest (VersionSet::Recover)
  for (const [tag, what] of [
    [3, 'next file number'],
    [2, 'log number'],
    [4, 'last sequence number'],
  ] as const) {
    if (!seen.has(tag)) throw new RangeError(`it has no ${what}`);
  }
  const tables = new Map<number, { size: number; smallest: Uint8Array; largest: Uint8Array }>();
  for (const { number, size, smallest, largest } of live.values()) tables.set(number, { size, smallest, largest });
  return { comparator, logNumber, prevLogNumber, tables };
}

/** The length of a Snappy block once decompressed (its first varint); `null` when it has none. */
function snappyLength(input: Uint8Array): number | null {
  try {
    const length = new Cursor(input).varint();
    return length > 1 << 30 ? null : length;
  } catch {
    return null;
  }
}

/**
 * A Snappy block decompressed into `out` at `at` (room for its {@link snappyLength}); `false`
 * when the bytes are not one. A copy from far enough back is one `copyWithin`; a short or
 * overlapping one (a run) is copied byte by byte, which is what it is.
 */
function unsnappyInto(input: Uint8Array, out: Uint8Array, at: number): boolean {
  const cursor = new Cursor(input);
  const length = cursor.varint();
  const start = at;
  const end = at + length;
  let o = at;
  let i = cursor.at;
  while (i < input.length) {
    const tag = input[i++] as number;
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >>> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = 0;
        for (let k = 0; k < bytes; k++) n += (input[i++] ?? 0) * 2 ** (8 * k);
      }
      n += 1;
      if (i + n > input.length || o + n > end) return false;
      if (n < 16) for (let k = 0; k < n; k++) out[o + k] = input[i + k] as number;
      else out.set(input.subarray(i, i + n), o);
      i += n;
      o += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      n = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | (input[i++] ?? 0);
    } else if (kind === 2) {
      n = (tag >>> 2) + 1;
      offset = (input[i] ?? 0) | ((input[i + 1] ?? 0) << 8);
      i += 2;
    } else {
      n = (tag >>> 2) + 1;
      offset = u32(input, i);
      i += 4;
    }
    if (i > input.length || offset === 0 || offset > o - start || o + n > end) return false;
    if (offset >= n && n > 24) {
      out.copyWithin(o, o - offset, o - offset + n);
      o += n;
    } else for (let k = 0; k < n; k++, o++) out[o] = out[o - offset] as number;
  }
  return o === end;
}

/** A Snappy block, decompressed; `null` when the bytes are not one. */
function unsnappy(input: Uint8Array): Uint8Array | null {
  const length = snappyLength(input);
  if (length === null) return null;
  const out = new Uint8Array(length);
  return unsnappyInto(input, out, 0) ? out : null;
}

/**
 * The block at a handle, its trailer checked against the stored block (LevelDB's checksum covers
 * the block as stored, compressed or not); decompressed when `read`. Why not, as a string.
 */
function blockAt(table: Uint8Array, offset: number, size: number, read: boolean): Uint8Array | string {
  if (offset + size + 5 > table.length) return `a block at byte ${offset} runs past the end of the file`;
  const contents = table.subarray(offset, offset + size);
  const type = table[offset + size] as number;
  const expected = unmask(u32(table, offset + size + 1));
  if (crc32c(table, crc32c(table, 0, offset, offset + size), offset + size, offset + size + 1) !== expected)
    return `the block at byte ${offset} does not match its checksum`;
  if (type === 0) return contents;
  if (type !== 1) return `the block at byte ${offset} has an unknown compression type ${type}`;
  if (!read) return contents;
  return unsnappy(contents) ?? `the block at byte ${offset} does not decompress`;
}

/** Where a block is in its table: its offset and its size as stored (its trailer after it). */
export interface BlockHandle {
  readonly offset: number;
  readonly size: number;
}

/** A block handle's two varints, as an index block's value (or the footer) holds them. */
const handleOf = (cursor: Cursor): BlockHandle => ({ offset: cursor.varint(), size: cursor.varint() });

/**
 * The handles of a table's meta-index and index blocks, from its footer; why not, as a string.
 * @throws RangeError when the footer's handles do not decode
 */
function footerOf(table: Uint8Array): { readonly meta: BlockHandle; readonly index: BlockHandle } | string {
  if (table.length < 48) return `${table.length} bytes, shorter than a table's footer`;
  const footer = table.length - 48;
  if (u32(table, footer + 40) !== 0x8b80fb57 || u32(table, footer + 44) !== 0xdb477524)
    return 'its footer does not end with the table magic number';
  const handles = new Cursor(table.subarray(footer, footer + 40));
  const meta = handleOf(handles);
  return { meta, index: handleOf(handles) };
}

/**
 * The handles of a table's data blocks in key order (its index block's entries), the index
 * block checked against its checksum; why not, as a string.
 */
export function dataBlockHandles(table: Uint8Array): BlockHandle[] | string {
  try {
    const footer = footerOf(table);
    if (typeof footer === 'string') return footer;
    const index = blockAt(table, footer.index.offset, footer.index.size, true);
    if (typeof index === 'string') return index;
    return blockValues(index).map((value) => handleOf(new Cursor(value)));
  } catch (e) {
    return `a block does not decode (${(e as Error).message})`;
  }
}

/**
 * How many bytes the block at `handle` of `table` takes once read (decompressed), its trailer
 * checked as {@link blockAt} checks it; why not, as a string. {@link readBlockInto} then reads it.
 */
export function blockLength(table: Uint8Array, handle: BlockHandle): number | string {
  const stored = blockAt(table, handle.offset, handle.size, false);
  if (typeof stored === 'string') return stored;
  if (table[handle.offset + handle.size] === 0) return stored.length;
  return snappyLength(stored) ?? `the block at byte ${handle.offset} does not decompress`;
}

/**
 * Reads the block at `handle` (one {@link blockLength} measured) into `out` at `at`,
 * decompressed where it is compressed: the read needs no buffer of its own. `false` when it does
 * not decompress.
 */
export function readBlockInto(table: Uint8Array, handle: BlockHandle, out: Uint8Array, at: number): boolean {
  const stored = table.subarray(handle.offset, handle.offset + handle.size);
  if (table[handle.offset + handle.size] === 0) {
    out.set(stored, at);
    return true;
  }
  return unsnappyInto(stored, out, at);
}

/** The values of a block's entries (the keys, prefix-compressed, are skipped). */
function blockValues(block: Uint8Array): Uint8Array[] {
  if (block.length < 4) throw new RangeError('a block shorter than its restart count');
  const restarts = u32(block, block.length - 4);
  const end = block.length - 4 * (restarts + 1);
  if (end < 0) throw new RangeError('a restart count larger than the block');
  const cursor = new Cursor(block.subarray(0, end));
  const values: Uint8Array[] = [];
  while (!cursor.done) {
    cursor.varint(); // bytes shared with the previous key
    const unshared = cursor.varint();
    const valueLength = cursor.varint();
    cursor.at += unshared;
    if (cursor.at + valueLength > end) throw new RangeError('an entry runs past the block');
    values.push(cursor.bytes.subarray(cursor.at, cursor.at + valueLength));
    cursor.at += valueLength;
  }
  return values;
}

/**
 * Checks every block of a table against its checksum, as LevelDB would with `verify_checksums`
 * (and `paranoid_checks` at open) on: the footer, the index and meta-index blocks, and every
 * data block the index names. Gives why it is damaged, or `null` when it is whole.
 */
export function checkTable(table: Uint8Array): string | null {
  try {
    const footer = footerOf(table);
    if (typeof footer === 'string') return footer;
    const meta = blockAt(table, footer.meta.offset, footer.meta.size, true);
    if (typeof meta === 'string') return meta;
    const index = blockAt(table, footer.index.offset, footer.index.size, true);
    if (typeof index === 'string') return index;
    // the data blocks (the index's) and the filter blocks (the meta-index's), checked as stored
    for (const value of [...blockValues(meta), ...blockValues(index)]) {
      const { offset, size } = handleOf(new Cursor(value));
      const block = blockAt(table, offset, size, false);
      if (typeof block === 'string') return block;
    }
  } catch (e) {
    return `a block does not decode (${(e as Error).message})`;
  }
  return null;
}
