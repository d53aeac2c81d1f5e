/**
 * The CBOR of the values most rows hold (strings, whole numbers from 0 to 2^32 - 1, arrays of
 * them: an item's state, a sent item's ids, a batch's decisions), written straight into the
 * buffer a row's bytes are put together in, byte for byte as cbor-x writes them (`layout.ts`'s
 * encoder). A build encodes a row or two a record: through cbor-x each was a new buffer and a
 * copy, and its allocations a good part of the collector's work. Any other value is cbor-x's.
 *
 * @module
 */

/** {@link writeCbor}'s answer for a value it does not write. */
export const NOT_SIMPLE = -1;
/** {@link writeCbor}'s answer when the value does not fit before `end`. */
export const NO_ROOM = -2;

/** Strings shorter than this are written by a loop here, longer ones by `Buffer.write` (as cbor-x does). */
const SHORT_STRING = 0x40;

/**
 * Writes the CBOR of `value` into `target` from `at`, up to `end` at most: gives where it ends,
 * {@link NOT_SIMPLE} for a value other than a string, a whole number from 0 to 2^32 - 1 or an
 * array of such values, or {@link NO_ROOM}.
 */
export function writeCbor(target: Buffer, at: number, end: number, value: unknown): number {
  if (typeof value === 'string') return writeString(target, at, end, value);
  if (typeof value === 'number') {
    if (value >>> 0 !== value) return NOT_SIMPLE;
    if (at + 5 > end) return NO_ROOM;
    return writeHead(target, at, 0x00, value);
  }
  if (!Array.isArray(value)) return NOT_SIMPLE;
  if (at + 5 > end) return NO_ROOM;
  let position = writeHead(target, at, 0x80, value.length);
  for (const element of value as readonly unknown[]) {
    position = writeCbor(target, position, end, element);
    if (position < 0) return position;
  }
  return position;
}

/** A head of major type `major` (its top three bits) with the argument `n`, in the fewest bytes. */
function writeHead(target: Buffer, at: number, major: number, n: number): number {
  if (n < 0x18) {
    target[at] = major | n;
    return at + 1;
  }
  if (n < 0x100) {
    target[at] = major | 0x18;
    target[at + 1] = n;
    return at + 2;
  }
  if (n < 0x10000) {
    target[at] = major | 0x19;
    target.writeUInt16BE(n, at + 1);
    return at + 3;
  }
  target[at] = major | 0x1a;
  target.writeUInt32BE(n, at + 1);
  return at + 5;
}

/** The bytes of a head whose argument is `n`. */
const headSize = (n: number): number => (n < 0x18 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);

/**
 * A text string: its UTF-8 written after the head its length in UTF-16 code units would need
 * (its length in bytes is at least that), moved up when its length in bytes needs a longer one.
 */
function writeString(target: Buffer, at: number, end: number, value: string): number {
  const most = value.length * 3;
  if (at + 5 + most > end) return NO_ROOM;
  const guess = headSize(value.length);
  const from = at + guess;
  let length: number;
  if (value.length < SHORT_STRING) {
    let p = from;
    for (let i = 0; i < value.length; i++) {
      let c = value.charCodeAt(i);
      if (c < 0x80) target[p++] = c;
      else if (c < 0x800) {
        target[p++] = (c >> 6) | 0xc0;
        target[p++] = (c & 0x3f) | 0x80;
      } else if ((c & 0xfc00) === 0xd800 && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        c = 0x10000 + ((c & 0x03ff) << 10) + (value.charCodeAt(++i) & 0x03ff);
        target[p++] = (c >> 18) | 0xf0;
        target[p++] = ((c >> 12) & 0x3f) | 0x80;
        target[p++] = ((c >> 6) & 0x3f) | 0x80;
        target[p++] = (c & 0x3f) | 0x80;
      } else {
        target[p++] = (c >> 12) | 0xe0;
        target[p++] = ((c >> 6) & 0x3f) | 0x80;
        target[p++] = (c & 0x3f) | 0x80;
      }
    }
    length = p - from;
  } else length = target.write(value, from, most, 'utf8');
  const head = headSize(length);
  if (head !== guess) target.copyWithin(at + head, from, from + length);
  writeHead(target, at, 0x60, length);
  return at + head + length;
}
