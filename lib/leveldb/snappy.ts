/**
 * A Snappy decompressor, for the one use left of it: a table's index and meta-index blocks, which
 * LevelDB compresses like any other block and which name the data and filter blocks whose
 * checksums the folder check verifies (`table.ts`). Data blocks are never decompressed here:
 * their checksums cover them as stored, and their records are read through classic-level.
 * Reads bytes, changes nothing.
 *
 * @module
 */
import { Cursor, u32 } from './bytes.js';

/** A Snappy block, decompressed; `null` when the bytes are not one. */
export function unsnappy(input: Uint8Array): Uint8Array | null {
  let length: number;
  const cursor = new Cursor(input);
  try {
    length = cursor.varint();
  } catch {
    return null;
  }
  if (length > 1 << 30) return null;
  const out = new Uint8Array(length);
  let o = 0;
  let i = cursor.at;
  while (i < input.length) {
    const tag = input[i++] as number;
    const kind = tag & 3;
    if (kind === 0) {
      // a literal: its length in the tag, or in the 1 to 4 bytes after it
      let n = tag >>> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = 0;
        for (let k = 0; k < bytes; k++) n += (input[i++] ?? 0) * 2 ** (8 * k);
      }
      n += 1;
      if (i + n > input.length || o + n > length) return null;
      out.set(input.subarray(i, i + n), o);
      i += n;
      o += n;
      continue;
    }
    // a copy of `n` bytes from `offset` back, with a 1-, 2- or 4-byte offset
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
    if (i > input.length || offset === 0 || offset > o || o + n > length) return null;
    // byte by byte: a copy may overlap what it writes (a run)
    for (let k = 0; k < n; k++, o++) out[o] = out[o - offset] as number;
  }
  return o === length ? out : null;
}
