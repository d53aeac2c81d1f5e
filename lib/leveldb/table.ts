/**
 * A LevelDB table (`NNNNNN.ldb`, or `.sst` from older versions), checked as LevelDB 1.20 would
 * with `verify_checksums` on, which classic-level never turns on: every block against its
 * checksum. From LevelDB's `doc/table_format.md`: blocks, each followed by a compression type (1)
 * and a masked CRC-32C of the block and its type (4, LE); an index block of handles (offset,
 * size) of the data blocks; a meta-index block naming the filter block; a 48-byte footer with
 * the handles of the index and meta-index blocks and a magic number. Blocks may be
 * Snappy-compressed: the index and meta-index blocks are decompressed (`snappy.ts`) to find the
 * others; those are checked as stored, which is what their checksums cover. Reads bytes, changes
 * nothing.
 *
 * @module
 */
import { Cursor, u32 } from './bytes.js';
import { crc32c, unmask } from './crc32c.js';
import { unsnappy } from './snappy.js';

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
interface BlockHandle {
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
