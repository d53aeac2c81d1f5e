/**
 * How ledgerstore's own values carry their CRC-32C in LevelDB: one checksum function
 * (`leveldb/crc32c.ts`), and one way to seal with it, for a ledger's records and a read model's
 * rows.
 *
 * @module
 */

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
  const at = value.length - CHECKSUM_LENGTH;
  if (at < 1 || value[at] !== CHECKSUM_HEAD) return 'no checksum';
  const stored =
    (((value[at + 1] as number) << 24) |
      ((value[at + 2] as number) << 16) |
      ((value[at + 3] as number) << 8) |
      (value[at + 4] as number)) >>>
    0;
  return crcOf(value, at) === stored ? at : 'mismatch';
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
