/**
 * The canonical shape of a ledger record's CBOR (the one a LevelDB log stores,
 * `backends/level/values.ts`), checked byte by byte: a pass over a run of values that says, of
 * each, when it has exactly that shape with valid values, where each of its values is, in the
 * layout of the JSON lines' scan (`scan-slots.ts`), so that the same reader (`canonical.ts`) and the
 * same state (`Projection.replayLine`) take both. It builds no string and no object. A value it
 * cannot vouch for is marked for the general decoding (cbor-x, then `codec.normalize`), which
 * decides, with its own words for what is wrong.
 *
 * The shape: a map of the record's fields in the record's own order (`type` first), each key a
 * text string in its shortest head; the tags, the workspace and the keys as `encodeRecord`
 * writes them; any other text a definite-length text string of valid UTF-8 (any head); the
 * time and a session id checked as `normalize` checks them; `part` a u32, `status` a u16 or
 * `null`, a `turn` any unsigned integer up to 2^53-1 (a larger one is the general decoding's,
 * which keeps it exactly); `ids` a definite-length array of text; and nothing after the record.
 * A value longer than {@link MAX_BODY_BYTES} is left to the general decoding, which measures its
 * line.
 *
 * Pure (bytes in, numbers out), so that it can run on a worker thread.
 *
 * @module
 */
import { isUtf8 } from 'node:buffer';
import { MAX_LINE_BYTES } from '../log.js';
import { isSessionIdAt, isTimeAt } from './byte-rules.js';
import { DECIDED, EDIT_ITEM, FAILED, SENT, SERDE, UTF8 } from './scan-slots.js';

/**
 * The longest value the scan vouches for: the line of a record of that many CBOR bytes is within
 * {@link MAX_LINE_BYTES} whatever its texts (a byte of text takes at most 6 in JSON, each text
 * its quotes and a comma, the rest of a line at most 256).
 */
export const MAX_BODY_BYTES = Math.floor((MAX_LINE_BYTES - 256) / 9);

/** A CBOR text string in its shortest head, with the head: a key, a tag, a workspace. */
function textOf(text: string): Uint8Array {
  const bytes = Buffer.from(text, 'utf8');
  return Uint8Array.of(0x60 | bytes.length, ...bytes);
}

/** Fixed bytes: map heads, keys and tags, each after the value before it. */
const fixed = (...parts: (string | number)[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((part) => (typeof part === 'number' ? [part] : [...textOf(part)])));

const DECIDED_START = fixed(0xa4, 'type', 'decided', 'time');
const SENT_START = fixed(0xa4, 'type', 'sent', 'time');
const FAILED_START = fixed(0xa5, 'type', 'failed', 'time');
const ITEM = fixed('item');
const TURN_SESSION = fixed(0xa3, 'type', 'turn', 'session');
const TURN = fixed('turn');
const EDIT_ID = fixed(0xa3, 'type', 'edit', 'id');
const PART = fixed('part');
const ACTION = fixed('action');
const IDS = fixed('ids');
const STATUS = fixed('status');
const KIND = fixed('kind');
const SPEAKER = fixed('speaker');
const PEER = fixed('peer');
const SESSION = fixed('session');
const TEXT = fixed('text');
/** The actions' starts up to their first value, in `ACTION_VARIANTS`' order. */
const ACTION_STARTS: readonly Uint8Array[] = [
  fixed(0xa3, 'type', 'turn', 'workspace'),
  fixed(0xa5, 'type', 'conclude', 'workspace'),
  fixed(0xa3, 'type', 'unconclude', 'workspace'),
  fixed(0xa3, 'type', 'fleet', 'session'),
  fixed(0xa3, 'type', 'retract', 'session'),
  fixed(0xa2, 'type', 'skip', 'why'),
];
/** The workspaces, in `WORKSPACES`' order. */
const WORKSPACE_NAMES: readonly Uint8Array[] = [fixed('trusted'), fixed('untrusted'), fixed('fleet')];
const NULL = 0xf6;
const TEXT_MAJOR = 3;
const ARRAY_MAJOR = 4;

/** The output, grown as needed, and where the next slot goes. Module state: one scan at a time per thread. */
let out = new Int32Array(1 << 12);
let w = 0;
/** The end of the value being scanned: nothing at or after it is read. */
let stop = 0;
/** The header of the value being scanned. */
let header = 0;
/** The argument of the head last read ({@link headOf}): its high and low 32 bits. */
let high = 0;
let low = 0;

function reserve(slots: number): void {
  if (w + slots <= out.length) return;
  const larger = new Int32Array(Math.max(out.length * 2, w + slots));
  larger.set(out.subarray(0, w));
  out = larger;
}

/** The index after `bytes` at `i`, or -1. */
function literal(b: Uint8Array, i: number, bytes: Uint8Array): number {
  if (i < 0 || i + bytes.length > stop) return -1;
  for (let k = 0; k < bytes.length; k++) if (b[i + k] !== bytes[k]) return -1;
  return i + bytes.length;
}

/**
 * The index after the head at `i` of a data item of major type `major` and definite length,
 * its argument in {@link high} and {@link low}; or -1. A head with an 8-byte argument only for
 * an integer: cbor-x refuses a text or an array with one.
 */
function headOf(b: Uint8Array, i: number, major: number): number {
  if (i < 0 || i >= stop) return -1;
  const initial = b[i] as number;
  if (initial >> 5 !== major) return -1;
  const info = initial & 0x1f;
  high = 0;
  if (info < 24) {
    low = info;
    return i + 1;
  }
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 && major === 0 ? 8 : 0;
  // 28-30 are reserved, 31 an indefinite length: the general decoding's
  if (size === 0 || i + 1 + size > stop) return -1;
  if (size === 1) low = b[i + 1] as number;
  else if (size === 2) low = ((b[i + 1] as number) << 8) | (b[i + 2] as number);
  else if (size === 4) low = uint32(b, i + 1);
  else {
    high = uint32(b, i + 1);
    low = uint32(b, i + 5);
  }
  return i + 1 + size;
}

const uint32 = (b: Uint8Array, at: number): number =>
  (b[at] as number) * 0x100_0000 +
  (((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number));

/** A text string at `i`: its two slots written (where its UTF-8 starts, its length times 4 plus ASCII or UTF-8), the index after it; or -1. */
function text(b: Uint8Array, i: number): number {
  i = headOf(b, i, TEXT_MAJOR);
  if (i < 0 || high !== 0) return -1;
  const end = i + low;
  if (end > stop) return -1;
  let how = 0;
  for (let k = i; k < end; k++) {
    if ((b[k] as number) > 0x7f) {
      // not UTF-8 is damage, for the general decoding to say (`cborHeads`)
      if (!isUtf8(b.subarray(k, end))) return -1;
      how = UTF8;
      break;
    }
  }
  out[w++] = i;
  out[w++] = (low << 2) | how;
  return end;
}

/** A session id's text at `i`: its slots written, the index after it; or -1. */
function sessionId(b: Uint8Array, i: number): number {
  const after = text(b, i);
  return after >= 0 && isSessionIdAt(b, out[w - 2] as number, (out[w - 1] as number) >>> 2) ? after : -1;
}

/** An unsigned integer at `i` up to `max` (at most 2^53-1): its high and low 32 bits written, the index after it; or -1. */
function unsigned(b: Uint8Array, i: number, max: number): number {
  i = headOf(b, i, 0);
  if (i < 0 || high * 0x1_0000_0000 + low > max) return -1;
  out[w++] = high;
  out[w++] = low | 0;
  return i;
}

/** The item's map at `i`; its bits into {@link header}. */
function item(b: Uint8Array, i: number): number {
  const turn = literal(b, i, TURN_SESSION);
  if (turn >= 0) {
    i = sessionId(b, turn);
    return unsigned(b, literal(b, i, TURN), Number.MAX_SAFE_INTEGER);
  }
  header |= EDIT_ITEM;
  i = text(b, literal(b, i, EDIT_ID));
  return unsigned(b, literal(b, i, PART), 0xffff_ffff);
}

/** The workspace's text at `i`: its bits into {@link header}. */
function workspace(b: Uint8Array, i: number): number {
  for (let n = 0; n < WORKSPACE_NAMES.length; n++) {
    const after = literal(b, i, WORKSPACE_NAMES[n] as Uint8Array);
    if (after >= 0) {
      header |= n << 6;
      return after;
    }
  }
  return -1;
}

/** The action's map at `i`; its bits into {@link header}. */
function action(b: Uint8Array, i: number): number {
  let type = 0;
  let at = -1;
  for (; type < ACTION_STARTS.length; type++) {
    at = literal(b, i, ACTION_STARTS[type] as Uint8Array);
    if (at >= 0) break;
  }
  if (at < 0) return -1;
  header |= type << 3;
  switch (type) {
    case 0: // turn
      return text(b, literal(b, workspace(b, at), SPEAKER));
    case 1: // conclude
      at = text(b, literal(b, workspace(b, at), PEER));
      at = sessionId(b, literal(b, at, SESSION));
      return text(b, literal(b, at, TEXT));
    case 2: // unconclude
      return text(b, literal(b, workspace(b, at), TEXT));
    case 3: // fleet
    case 4: // retract
      return text(b, literal(b, sessionId(b, at), TEXT));
    default: // skip
      return text(b, at);
  }
}

/** The ids' array at `i`: their count, then each. */
function ids(b: Uint8Array, i: number): number {
  i = headOf(b, i, ARRAY_MAJOR);
  if (i < 0 || high !== 0 || low > stop - i) return -1; // (each id takes a byte at least)
  const count = low;
  out[w++] = count;
  for (let n = 0; n < count && i >= 0; n++) {
    reserve(2);
    i = text(b, i);
  }
  return i;
}

/** The record's map at `i`; its slots after the header's two. */
function record(b: Uint8Array, i: number): number {
  let kind = DECIDED;
  let at = literal(b, i, DECIDED_START);
  if (at < 0) {
    kind = SENT;
    at = literal(b, i, SENT_START);
  }
  if (at < 0) {
    kind = FAILED;
    at = literal(b, i, FAILED_START);
  }
  if (at < 0) return -1;
  header = kind;
  // the time: 24 bytes of text (checked as a time, so ASCII)
  at = headOf(b, at, TEXT_MAJOR);
  if (at < 0 || high !== 0 || low !== 24 || at + 24 > stop || !isTimeAt(b, at)) return -1;
  out[w++] = at;
  at = item(b, literal(b, at + 24, ITEM));
  if (kind === DECIDED) return action(b, literal(b, at, ACTION));
  if (kind === SENT) return ids(b, literal(b, at, IDS));
  at = literal(b, at, STATUS);
  if (at < 0) return -1;
  if (at < stop && b[at] === NULL) {
    out[w++] = -1;
    at++;
  } else {
    at = unsigned(b, at, 0xffff);
    w--; // a u16 is all in its low bits: they take the high bits' slot
    out[w - 1] = out[w] as number;
  }
  return text(b, literal(b, at, KIND));
}

/** The slots of the last {@link scanValuesRun}, while the run they describe is still being read. */
let held: Int32Array | null = null;

/**
 * {@link scanValues} for a reader that reads the slots as it takes the values in, and may wait
 * between two of them (an async replay) while another log of this thread scans: the slots are
 * the reader's until it gives them back ({@link releaseValues}), a scan meanwhile writing into an
 * array of its own.
 */
export function scanValuesRun(
  bytes: Uint8Array,
  starts: Int32Array,
  ends: Int32Array,
  count: number,
): { slots: Int32Array; length: number } {
  if (held === out) out = new Int32Array(out.length);
  const scanned = scanValues(bytes, starts, ends, count);
  held = scanned.slots;
  return scanned;
}

/** The slots {@link scanValuesRun} gave are read no more: the next scan may write over them. */
export function releaseValues(slots: Int32Array): void {
  if (held === slots) held = null;
}

/**
 * Scans the `count` values of `bytes`, the n-th at `[starts[n], ends[n])` (in order, apart),
 * and gives what it found, value after value, in `scan.ts`'s layout (where a line's newline is,
 * the end of the value). The array is this thread's, reused by the next scan: copy it (or send
 * it) before scanning again.
 * @returns the slots and how many of them there are
 */
export function scanValues(
  bytes: Uint8Array,
  starts: Int32Array,
  ends: Int32Array,
  count: number,
): { slots: Int32Array; length: number } {
  w = 0;
  for (let n = 0; n < count; n++) {
    const start = starts[n] as number;
    const end = ends[n] as number;
    // the most a value's slots take but for its ids, which reserve their own
    reserve(16);
    const at = w;
    w += 2;
    stop = end;
    const after = end - start <= MAX_BODY_BYTES ? record(bytes, start) : -1;
    if (after !== end) {
      w = at + 2;
      header = SERDE;
    }
    out[at] = header;
    out[at + 1] = end;
  }
  return { slots: out, length: w };
}
