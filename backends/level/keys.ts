/**
 * A LevelDB log's record keys (`index.ts`, whose top documents the format): `0x01` and the
 * position, 8 bytes big-endian.
 *
 * @module
 */
import type { Position } from '../../lib/log.js';

/** The first byte of every record key. */
export const RECORD_PREFIX = 0x01;
export const RECORD_KEY_LENGTH = 9;
/** The first key after every record key. */
export const RECORDS_END = Uint8Array.of(RECORD_PREFIX + 1);

/** The key of the record at `position`. */
export function recordKey(position: Position): Uint8Array {
  return writeRecordKey(new Uint8Array(RECORD_KEY_LENGTH), position);
}

/** `key` (of {@link RECORD_KEY_LENGTH} bytes) made the key of the record at `position`. */
export function writeRecordKey(key: Uint8Array, position: Position): Uint8Array {
  key[0] = RECORD_PREFIX;
  const high = Math.floor(position / 0x1_0000_0000);
  const low = position >>> 0;
  key[1] = high >>> 24;
  key[2] = high >>> 16;
  key[3] = high >>> 8;
  key[4] = high;
  key[5] = low >>> 24;
  key[6] = low >>> 16;
  key[7] = low >>> 8;
  key[8] = low;
  return key;
}

/** The position the record key `bytes[at, at + length)` names, or `null` when it is not one. */
function positionAt(bytes: Uint8Array, at: number, length: number): Position | null {
  if (length !== RECORD_KEY_LENGTH || bytes[at] !== RECORD_PREFIX) return null;
  const high =
    (bytes[at + 1] as number) * 0x100_0000 +
    (((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 8) | (bytes[at + 4] as number));
  const low =
    (bytes[at + 5] as number) * 0x100_0000 +
    (((bytes[at + 6] as number) << 16) | ((bytes[at + 7] as number) << 8) | (bytes[at + 8] as number));
  return high >= 0x20_0000 ? null : high * 0x1_0000_0000 + low; // beyond 2^53: no position
}

/** The position a record key names, or `null` when `key` is not one. */
export const positionOf = (key: Uint8Array): Position | null => positionAt(key, 0, key.length);
