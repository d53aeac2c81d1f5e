/**
 * A LevelDB log's values (`index.ts`, whose top documents them): a record's CBOR, in the form
 * any CBOR reader takes as the record, sealed with its checksum; and read back, checked and
 * decoded, damage at its position when it holds no record.
 *
 * @module
 */
import { isUtf8 } from 'node:buffer';
import type { Options as CborOptions } from 'cbor-x';
import { cborX, onFirstUse } from '../../lib/dependencies.js';
import { asDamage, DamagedError, InvalidRecordError } from '../../lib/errors.js';
import { crc32c } from '../../lib/leveldb/crc32c.js';
import type { Position, RecordCodec } from '../../lib/log.js';
import { sealValue, unsealValue } from '../../lib/sealed-value.js';

export const DECODING: CborOptions & { readonly int64AsNumber: boolean } = {
  useRecords: false,
  mapsAsObjects: true,
  // A 64-bit integer reads as a number, as it was written (`wideIntegersAsBigInt`), rather than
  // as a bigint; one that a number cannot hold exactly is read again by `coders().exact`. (An
  // option of cbor-x's that its types do not list.)
  int64AsNumber: true,
};
/** Every 64-bit integer as a bigint: for a value with an integer beyond 2^53-1 (a Honcho turn up to 2^64-1). */
const EXACT_DECODING: typeof DECODING = { ...DECODING, int64AsNumber: false };
/** The encoder of values, their decoder, and `exact`, which reads every 64-bit integer as a bigint. */
export const coders = onFirstUse(() => {
  const { Encoder, Decoder } = cborX();
  return {
    encoder: new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false }),
    decoder: new Decoder(DECODING),
    exact: new Decoder(EXACT_DECODING),
  };
});

export const hex = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

/**
 * `value` with `convert` applied to each value in it that is neither an array nor a plain
 * object, copied where one changes: the same object when none does.
 */
function withLeaves(value: unknown, convert: (leaf: unknown) => unknown): unknown {
  if (typeof value !== 'object' || value === null) return convert(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((element: unknown, n) => {
      const converted = withLeaves(element, convert);
      if (converted !== element) (copy ??= [...value])[n] = converted;
    });
    return copy ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let copy: { [key: string]: unknown } | null = null;
  for (const [key, field] of Object.entries(value)) {
    const converted = withLeaves(field, convert);
    if (converted !== field) (copy ??= { ...value })[key] = converted;
  }
  return copy ?? value;
}

const wideAsBigInt = (leaf: unknown): unknown =>
  typeof leaf === 'number' && Number.isSafeInteger(leaf) && (leaf > 0xffff_ffff || leaf < -0x1_0000_0000)
    ? BigInt(leaf)
    : leaf;

/**
 * `value` with every integer that does not fit in 32 bits as a bigint, which cbor-x writes as a
 * CBOR integer (a number it would write as a float64). The same object when there is none.
 */
export const wideIntegersAsBigInt = (value: unknown): unknown => withLeaves(value, wideAsBigInt);

const safeAsNumber = (leaf: unknown): unknown =>
  typeof leaf === 'bigint' && leaf >= -MAX_SAFE && leaf <= MAX_SAFE ? Number(leaf) : leaf;

/**
 * `value` with every bigint that a number holds exactly as that number: what `coders().exact` read,
 * in the form `decoder` gives (a bigint stays only where a number would round). The same object
 * when there is none.
 */
const safeIntegersAsNumbers = (value: unknown): unknown => withLeaves(value, safeAsNumber);

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The CBOR of a normalized record. */
export function encodeRecord(record: unknown): Uint8Array {
  try {
    return coders().encoder.encode(wideIntegersAsBigInt(record));
  } catch (e) {
    /* c8 ignore next -- cbor-x throws Errors; String(e) is for a non-Error thrown by a record's own code (a getter), which plain data has none of */
    throw new InvalidRecordError(`it cannot be written as CBOR: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The checksum of a record: CRC-32C of its key, then of its CBOR (`value[0, end)`, the body where it lies). */
export const checksumAt = (key: Uint8Array, value: Uint8Array, end: number): number =>
  crc32c(value, crc32c(key), 0, end);

/** The checksum of a record whose CBOR is `body`: {@link checksumAt}. */
export const checksumOf = (key: Uint8Array, body: Uint8Array): number => checksumAt(key, body, body.length);

/** A record's value: its CBOR, then its checksum. */
export const sealed = (key: Uint8Array, body: Uint8Array): Uint8Array => sealValue(body, checksumOf(key, body));

/**
 * The record a value holds, its checksum checked (when `checked`: version 2) and the record
 * checked by the codec; damage at `position` when it holds none.
 */
export function decodeValue<R>(
  name: string,
  codec: RecordCodec<R>,
  key: Uint8Array,
  value: Uint8Array,
  position: Position,
  checked: boolean,
): R {
  const body = checked ? unsealValue(value, (stored) => checksumOf(key, stored)) : value;
  if (body === 'no checksum')
    throw new DamagedError(
      name,
      position + 1,
      `the value does not end with its checksum: ${hex(value.subarray(0, 32))}`,
    );
  if (body === 'mismatch')
    throw new DamagedError(
      name,
      position + 1,
      `the value does not match its checksum: its bytes were changed (${hex(value.subarray(0, 32))})`,
    );
  let decoded: unknown;
  try {
    decoded = coders().decoder.decode(body);
  } catch (e) {
    /* c8 ignore next -- cbor-x throws Errors only: String(e) is for what the type of a caught value cannot rule out */
    const why = e instanceof Error ? e.message : String(e);
    throw new DamagedError(name, position + 1, `the value is not CBOR (${why}): ${hex(body.subarray(0, 32))}`, {
      cause: e,
    });
  }
  const heads = cborHeads(body);
  if ((heads & TEXT_NOT_UTF8) !== 0)
    throw new DamagedError(name, position + 1, `the value has text that is not UTF-8: ${hex(body.subarray(0, 32))}`);
  // read again, exactly, only where the rare integer needs it: the common value is read once
  if ((heads & INTEGER_BEYOND_DOUBLE) !== 0) decoded = safeIntegersAsNumbers(coders().exact.decode(body));
  try {
    return codec.normalize(decoded);
  } catch (e) {
    if (e instanceof InvalidRecordError)
      throw new DamagedError(name, position + 1, `not a valid record: ${e.why}`, { cause: e });
    throw asDamage(name, position + 1, e);
  }
}

/** A flag of {@link cborHeads}: a text string is not UTF-8. */
export const TEXT_NOT_UTF8 = 1;
/** A flag of {@link cborHeads}: a 64-bit integer is beyond what a number holds exactly (2^53-1). */
export const INTEGER_BEYOND_DOUBLE = 2;

/**
 * What a walk over the heads of the CBOR data item `bytes` finds: {@link TEXT_NOT_UTF8} when a
 * text string is not UTF-8, as RFC 8949 requires it to be (cbor-x reads bytes that are not as
 * U+FFFD, which would turn damage into a different record), and {@link INTEGER_BEYOND_DOUBLE}
 * when an integer is one `decoder` reads as a rounded number. It looks into a text string only
 * when it has a byte above 0x7f: about a quarter of the time decoding takes, 5% of a replay's.
 * Bytes that are not well-formed CBOR are the decoder's to refuse; here they only end the walk.
 */
export function cborHeads(bytes: Uint8Array): number {
  /* c8 ignore next -- the walk follows bytes cbor-x decoded whole, so it never reads past their end; 0 there only ends the walk */
  const byte = (at: number): number => bytes[at] ?? 0;
  const uint32 = (at: number): number =>
    byte(at) * 0x100_0000 + ((byte(at + 1) << 16) | (byte(at + 2) << 8) | byte(at + 3));
  let found = 0;
  let at = 0;
  let items = 1; // data items still to walk in the innermost container: Infinity in one of indefinite length
  const outer: number[] = []; // the same for each container of indefinite length around it
  while (items > 0 && at < bytes.length) {
    const initial = byte(at++);
    if (initial === 0xff) {
      // the "break" that ends a container of indefinite length
      /* c8 ignore next -- cbor-x refuses a break outside a container of indefinite length; one would end the walk */
      items = (outer.pop() ?? 1) - 1;
      continue;
    }
    const major = initial >> 5;
    const info = initial & 0x1f;
    let argument = info;
    if (info === 24) {
      argument = byte(at);
      at += 1;
    } else if (info === 25) {
      argument = (byte(at) << 8) | byte(at + 1);
      at += 2;
    } else if (info === 26) {
      argument = uint32(at);
      at += 4;
    } else if (info === 27) {
      argument = uint32(at) * 0x1_0000_0000 + uint32(at + 4);
      at += 8;
      // rounded only past 2^53-1, so the sum says which: an unsigned past it, a negative -1 - it
      if ((major === 0 && argument > Number.MAX_SAFE_INTEGER) || (major === 1 && argument >= Number.MAX_SAFE_INTEGER))
        found |= INTEGER_BEYOND_DOUBLE;
    } else if (info === 31 && major >= 2 && major <= 5) {
      outer.push(items);
      items = Infinity;
      continue;
    }
    items--;
    if (major === 2) {
      at += argument;
    } else if (major === 3) {
      const end = at + argument;
      for (let n = at; n < end; n++) {
        if (byte(n) > 0x7f) {
          if (!isUtf8(bytes.subarray(at, end))) return found | TEXT_NOT_UTF8;
          break;
        }
      }
      at = end;
    } else if (major === 4) {
      items += argument;
    } else if (major === 5) {
      items += 2 * argument;
    } else if (major === 6) {
      items += 1; // a tag's content
    }
  }
  return found;
}
