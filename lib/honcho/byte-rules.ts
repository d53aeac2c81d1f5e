/**
 * The rules of a record's values that a scan checks byte by byte, as `normalize` (`record.ts`)
 * checks them on strings: a session id, a time, UTF-8, a JSON escape. Pure functions of bytes,
 * shared by the scan of JSON lines (`scan.ts`) and that of CBOR values (`cbor-scan.ts`).
 *
 * @module
 */

/** Bytes a session id may hold: `A-Z a-z 0-9 . _ -`. */
export const SESSION_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-') SESSION_BYTE[c.charCodeAt(0)] = 1;

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `b[start, start + length)` is a session id ({@link SESSION_ID_RULE} of `record.ts`).
 */
export function isSessionIdAt(b: Uint8Array, start: number, length: number): boolean {
  if (length === 0 || length > 128) return false;
  for (let i = start; i < start + length; i++) if (SESSION_BYTE[b[i] as number] !== 1) return false;
  // not `.` or `..`
  return !(length <= 2 && b[start] === 0x2e && (length === 1 || b[start + 1] === 0x2e));
}

/** The digit at `at`, or a number so negative that any field it is part of is negative. */
function digit(b: Uint8Array, at: number): number {
  const d = (b[at] as number) - 0x30;
  return d >= 0 && d <= 9 ? d : -1e6;
}

/**
 * Whether the 24 bytes at `i` are a time ({@link TIME_RULE} of `record.ts`, on a day that
 * exists).
 */
export function isTimeAt(b: Uint8Array, i: number): boolean {
  if (b[i + 4] !== 0x2d || b[i + 7] !== 0x2d || b[i + 10] !== 0x54 || b[i + 13] !== 0x3a || b[i + 16] !== 0x3a)
    return false;
  if (b[i + 19] !== 0x2e || b[i + 23] !== 0x5a) return false;
  const year = digit(b, i) * 1000 + digit(b, i + 1) * 100 + digit(b, i + 2) * 10 + digit(b, i + 3);
  const month = digit(b, i + 5) * 10 + digit(b, i + 6);
  const day = digit(b, i + 8) * 10 + digit(b, i + 9);
  const hour = digit(b, i + 11) * 10 + digit(b, i + 12);
  const minute = digit(b, i + 14) * 10 + digit(b, i + 15);
  const second = digit(b, i + 17) * 10 + digit(b, i + 18);
  const millis = digit(b, i + 20) * 100 + digit(b, i + 21) * 10 + digit(b, i + 22);
  // a byte that is not a digit makes its field negative (see digit)
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return false;
  if (minute < 0 || minute > 59 || second < 0 || second > 59 || millis < 0) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month] as number));
}

/** The index after a valid UTF-8 sequence whose lead byte (at least 0x80) is at `i`, before `stop`; or -1. */
export function utf8Sequence(b: Uint8Array, i: number, stop: number): number {
  const c = b[i] as number;
  if (c < 0xc2 || c > 0xf4) return -1;
  const n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  if (i + n > stop) return -1;
  const c1 = b[i + 1] as number;
  if ((c1 & 0xc0) !== 0x80) return -1;
  if (n === 2) return i + 2;
  // the second byte's range rules out overlong forms, surrogates and what is past U+10FFFF
  if (c === 0xe0 ? c1 < 0xa0 : c === 0xed ? c1 > 0x9f : c === 0xf0 ? c1 < 0x90 : c === 0xf4 ? c1 > 0x8f : false)
    return -1;
  if (((b[i + 2] as number) & 0xc0) !== 0x80) return -1;
  if (n === 3) return i + 3;
  return ((b[i + 3] as number) & 0xc0) === 0x80 ? i + 4 : -1;
}

/** The value of the hex digit `c` (a byte), or -1. */
export function hexDigit(c: number): number {
  return c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
}

/** The index after a valid escape (not of a surrogate) whose backslash is at `i`, before `stop`; or -1. */
export function escapeSequence(b: Uint8Array, i: number, stop: number): number {
  if (i + 2 > stop) return -1;
  const e = b[i + 1];
  if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)
    return i + 2;
  if (e !== 0x75 || i + 6 > stop) return -1;
  let unit = 0;
  for (let k = i + 2; k < i + 6; k++) {
    const d = hexDigit(b[k] as number);
    if (d < 0) return -1;
    unit = unit * 16 + d;
  }
  return unit >= 0xd800 && unit <= 0xdfff ? -1 : i + 6;
}
