/**
 * A generation's rows as LevelDB's bytes (`layout.ts`): a row's key is the generation's row
 * prefix and the projection's key in UTF-8; its value, the value's CBOR and the checksum of the
 * key and the CBOR. A batch's rows are put through one scratch buffer rather than two new
 * buffers a row, when the batch copies what it is given (classic-level's does): a build writes a
 * few hundred thousand rows a batch, and the allocations were a tenth of its time.
 *
 * @module
 */
import { crc32c } from '../leveldb/crc32c.js';
import { CHECKSUM_LENGTH, sealAt } from '../sealed-value.js';
import type { Bytes, DbBatch } from './database.js';
import { NO_ROOM, NOT_SIMPLE, writeCbor } from './row-cbor.js';

/** The scratch buffer's first size; it grows for a row that does not fit. */
const SCRATCH = 1 << 16;
/** The room a value written in place is first given after its key; the scratch buffer doubles until it fits. */
const SIMPLE_ROOM = 256;

/** The keys and sealed values of one generation's rows. */
export class RowBytes {
  /** The CRC-32C of the prefix, which every row's checksum starts from. */
  readonly prefixCrc: number;
  private scratch: Buffer;

  constructor(readonly prefix: Buffer) {
    this.prefixCrc = crc32c(prefix);
    this.scratch = this.scratchOf(SCRATCH);
  }

  /** The LevelDB key of the row `key`, in a buffer of its own. */
  key(key: string): Buffer {
    const bytes = Buffer.allocUnsafe(this.prefix.length + Buffer.byteLength(key, 'utf8'));
    this.prefix.copy(bytes, 0);
    bytes.write(key, this.prefix.length, 'utf8');
    return bytes;
  }

  /** The checksum's seed for a row's value: the CRC of its whole LevelDB key. */
  keyCrc(rowKey: Bytes): number {
    return crc32c(rowKey.subarray(this.prefix.length), this.prefixCrc);
  }

  /** Puts the row `key` with `body` (its value's CBOR) into `batch`, sealed. */
  put(batch: DbBatch, key: string, body: Bytes): void {
    const keyEnd = this.writeKey(key, body.length + CHECKSUM_LENGTH);
    this.scratch.set(body, keyEnd);
    this.seal(batch, keyEnd, keyEnd + body.length);
  }

  /**
   * Puts the row `key` with `value` into `batch`, sealed, its CBOR written in place
   * (`row-cbor.ts`), when it is a value written there; gives whether it was (if not, nothing is put).
   */
  putSimple(batch: DbBatch, key: string, value: unknown): boolean {
    for (let room = SIMPLE_ROOM; ; room = this.scratch.length * 2) {
      const keyEnd = this.writeKey(key, room + CHECKSUM_LENGTH);
      const bodyEnd = writeCbor(this.scratch, keyEnd, this.scratch.length - CHECKSUM_LENGTH, value);
      if (bodyEnd === NOT_SIMPLE) return false;
      if (bodyEnd !== NO_ROOM) {
        this.seal(batch, keyEnd, bodyEnd);
        return true;
      }
    }
  }

  /** Seals the row whose key ends at `keyEnd` and CBOR at `bodyEnd` in the scratch buffer, and puts it into `batch`. */
  private seal(batch: DbBatch, keyEnd: number, bodyEnd: number): void {
    const scratch = this.scratch;
    // the CRC of the key and the body, which lie one after the other here
    sealAt(scratch, bodyEnd, crc32c(scratch.subarray(this.prefix.length, bodyEnd), this.prefixCrc));
    const rowKey = scratch.subarray(0, keyEnd);
    const value = scratch.subarray(keyEnd, bodyEnd + CHECKSUM_LENGTH);
    if (batch.copies) batch.put(rowKey, value);
    else batch.put(Buffer.from(rowKey), Buffer.from(value));
  }

  /** Puts the deletion of the row `key` into `batch`. */
  del(batch: DbBatch, key: string): void {
    const rowKey = this.scratch.subarray(0, this.writeKey(key, 0));
    batch.del(batch.copies ? rowKey : Buffer.from(rowKey));
  }

  /** Writes `key` after the prefix in the scratch buffer, with `after` bytes of room beyond it; gives where it ends. */
  private writeKey(key: string, after: number): number {
    const most = this.prefix.length + key.length * 3 + after;
    if (most > this.scratch.length) this.scratch = this.scratchOf(Math.max(most, this.scratch.length * 2));
    return this.prefix.length + this.scratch.write(key, this.prefix.length, 'utf8');
  }

  private scratchOf(size: number): Buffer {
    const scratch = Buffer.allocUnsafe(size);
    this.prefix.copy(scratch, 0);
    return scratch;
  }
}
