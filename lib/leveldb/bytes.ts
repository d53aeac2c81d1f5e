/**
 * How LevelDB lays out numbers in its files: fixed-width little-endian integers, varints and
 * length-prefixed strings, read. Reads bytes, changes nothing.
 *
 * @module
 */

/** The little-endian 32-bit unsigned integer at `at`. */
export const u32 = (b: Uint8Array, at: number): number =>
  ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16)) +
  (b[at + 3] as number) * 0x100_0000;
/** The little-endian 64-bit unsigned integer at `at` (exact up to 2^53). */
export const u64 = (b: Uint8Array, at: number): number => u32(b, at) + u32(b, at + 4) * 0x1_0000_0000;

/** A reader of LevelDB's varints and length-prefixed strings. */
export class Cursor {
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
