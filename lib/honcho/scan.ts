/**
 * The canonical shape of a ledger line (the one `codec.ts` writes), checked byte by byte: a pass
 * over a run of lines that says, of each, where its newline is and, when the line has exactly
 * that shape with valid values, where each of its values is. It builds no string and no object,
 * so it runs as well on a worker thread as here: a line that is not in that shape, or whose
 * values it cannot vouch for, is marked for the serde way (`decode.ts`), which decides.
 *
 * What it vouches for, as the serde way would: the keys in canonical order, the tags and the
 * workspace among serde's variants, the time ({@link isTime}'s shape, on a day that exists), a
 * session id of 1 to 128 of `A-Z a-z 0-9 . _ -` (not `.` or `..`), integers without sign,
 * fraction, exponent or leading zero (a `part` a u32, a `status` a u16, a `turn` any u64: one of
 * more than 15 digits is given as digits, for the reader to range and keep exactly), strings
 * without control characters, with valid UTF-8 and escapes, and no surrogate escape (the serde
 * way pairs those), and nothing after the record but JSON whitespace before the newline.
 *
 * What it gives, line after line, is in `scan-slots.ts`. Positions are indexes into the bytes
 * scanned. Every line of the run must end with a newline (the last byte of the run is one);
 * nothing past the run is read.
 *
 * @module
 */
import { escapeSequence, isSessionIdAt, isTimeAt, SESSION_BYTE, utf8Sequence } from './byte-rules.js';
import { ASCII, DECIDED, EDIT_ITEM, ESCAPED, FAILED, SENT, SERDE, TURN_DIGITS, UTF8 } from './scan-slots.js';

/**
 * A run of fixed bytes, compared four at a time (a `DataView`'s loads of 32 bits are cheap, and
 * most of a canonical line is keys and tags).
 */
interface Literal {
  readonly length: number;
  readonly words: Int32Array;
  readonly tail: Uint8Array;
}

function literalOf(text: string): Literal {
  const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
  const words = new Int32Array(bytes.length >> 2);
  const view = new DataView(bytes.buffer);
  for (let k = 0; k < words.length; k++) words[k] = view.getInt32(4 * k, true);
  return { length: bytes.length, words, tail: bytes.slice(words.length * 4) };
}

// The fixed bytes of the canonical form, each after the string or number before it.
const RECORD_START = literalOf('{"type":"');
const DECIDED_TIME = literalOf('decided","time":"');
const SENT_TIME = literalOf('sent","time":"');
const FAILED_TIME = literalOf('failed","time":"');
const ITEM = literalOf(',"item":{"type":"');
const TURN_SESSION = literalOf('turn","session":"');
const TURN = literalOf(',"turn":');
const EDIT_ID = literalOf('edit","id":"');
const PART = literalOf(',"part":');
const ACTION = literalOf(',"action":{"type":"');
const IDS = literalOf(',"ids":[');
const STATUS = literalOf(',"status":');
const NULL = literalOf('null');
const KIND = literalOf(',"kind":"');
const WORKSPACE = literalOf(',"workspace":"');
const SPEAKER = literalOf(',"speaker":"');
const PEER = literalOf(',"peer":"');
const SESSION = literalOf(',"session":"');
const TEXT = literalOf(',"text":"');
const WHY = literalOf('skip","why":"');
/** The action tags after `{"type":"`, with their closing quote, in `ACTION_VARIANTS`' order (`skip` is {@link WHY}). */
const TURN_TAG = literalOf('turn"');
const CONCLUDE_TAG = literalOf('conclude"');
const UNCONCLUDE_TAG = literalOf('unconclude"');
const FLEET_TAG = literalOf('fleet"');
const RETRACT_TAG = literalOf('retract"');
/** The workspaces with their closing quote, in `WORKSPACES`' order. */
const WORKSPACE_NAMES: readonly Literal[] = [literalOf('trusted"'), literalOf('untrusted"'), literalOf('fleet"')];

/** The output, grown as needed, and where the next slot goes. Module state: one scan at a time per thread. */
let out = new Int32Array(1 << 12);
let w = 0;
/** The end of the run: nothing at or after it is read. */
let stop = 0;
/** The header of the line being scanned. */
let header = 0;
/** The bytes being scanned, for loads of 32 bits. */
let view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

function reserve(slots: number): void {
  if (w + slots <= out.length) return;
  const larger = new Int32Array(Math.max(out.length * 2, w + slots));
  larger.set(out.subarray(0, w));
  out = larger;
}

/** The index after `literal` at `i`, or -1. */
function literal(b: Uint8Array, i: number, fixed: Literal): number {
  const end = i + fixed.length;
  if (end > stop) return -1;
  const { words, tail } = fixed;
  for (let k = 0; k < words.length; k++) if (view.getInt32(i + 4 * k, true) !== words[k]) return -1;
  const rest = i + 4 * words.length;
  for (let k = 0; k < tail.length; k++) if (b[rest + k] !== tail[k]) return -1;
  return end;
}

/** Bytes a string's text cannot simply go on past: a quote, a backslash, a control character, a byte of UTF-8 beyond ASCII. */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 256; c++) STRING_STOP[c] = c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x80 ? 1 : 0;

/** A string whose opening quote is before `i`: its two slots written, the index after its closing quote; or -1. */
function string(b: Uint8Array, i: number): number {
  const start = i;
  let how = ASCII;
  for (;;) {
    while (i < stop && STRING_STOP[b[i] as number] === 0) i++;
    if (i >= stop) return -1;
    const c = b[i] as number;
    if (c === 0x22) break;
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      how = ESCAPED;
      i = escapeSequence(b, i, stop);
    } else {
      if (how === ASCII) how = UTF8;
      i = utf8Sequence(b, i, stop);
    }
    if (i < 0) return -1;
  }
  out[w++] = start;
  out[w++] = ((i - start) << 2) | how;
  return i + 1;
}

/** A session id whose opening quote is before `i`: its slots written, the index after its closing quote; or -1. */
function sessionId(b: Uint8Array, i: number): number {
  const start = i;
  while (i < stop && SESSION_BYTE[b[i] as number] === 1) i++;
  const length = i - start;
  if (i >= stop || b[i] !== 0x22 || !isSessionIdAt(b, start, length)) return -1;
  out[w++] = start;
  out[w++] = length << 2;
  return i + 1;
}

/** A time whose opening quote is before `i` (its start written), the index after its closing quote; or -1. */
function time(b: Uint8Array, i: number): number {
  if (i + 25 > stop || b[i + 24] !== 0x22 || !isTimeAt(b, i)) return -1;
  out[w++] = i;
  return i + 25;
}

/**
 * An unsigned integer at `i` up to `max` (at most 2^53-1), without sign, fraction, exponent or
 * leading zero: its high and low 32 bits written, the index after it; or -1. With `digits`
 * (a turn), one of more than 15 digits is written as where its digits start and how many, and
 * -2 - that index is returned: the reader ranges it.
 */
function unsigned(b: Uint8Array, i: number, max: number, digits: boolean): number {
  const start = i;
  let value = 0;
  while (i < stop) {
    const d = (b[i] as number) - 0x30;
    if (d < 0 || d > 9) break;
    value = value * 10 + d;
    i++;
  }
  const count = i - start;
  if (count === 0 || (count > 1 && b[start] === 0x30)) return -1;
  const next = i < stop ? b[i] : -1;
  if (next === 0x2e || next === 0x65 || next === 0x45) return -1; // a fraction or an exponent
  if (count > 15) {
    if (!digits || count > 20) return -1; // past a u64 (or a field far narrower)
    out[w++] = start;
    out[w++] = count;
    return -2 - i;
  }
  if (value > max) return -1;
  out[w++] = Math.floor(value / 0x1_0000_0000);
  out[w++] = value >>> 0;
  return i;
}

/** The item after `{"type":"`, up to and including its closing brace; its bits into {@link header}. */
function item(b: Uint8Array, i: number): number {
  if (b[i] === 0x74) {
    i = literal(b, i, TURN_SESSION);
    if (i >= 0) i = sessionId(b, i);
    if (i >= 0) i = literal(b, i, TURN);
    if (i < 0) return -1;
    i = unsigned(b, i, Number.MAX_SAFE_INTEGER, true);
    if (i < -1) {
      header |= TURN_DIGITS;
      i = -2 - i;
    }
  } else {
    header |= EDIT_ITEM;
    i = literal(b, i, EDIT_ID);
    if (i >= 0) i = string(b, i);
    if (i >= 0) i = literal(b, i, PART);
    if (i >= 0) i = unsigned(b, i, 0xffff_ffff, false);
  }
  return closingBrace(b, i);
}

/** The index after the closing brace at `i`, or -1 (as when `i` is). */
function closingBrace(b: Uint8Array, i: number): number {
  return i >= 0 && i < stop && b[i] === 0x7d ? i + 1 : -1;
}

/** `,"<key>":"` at `i` and the string after it. */
function field(b: Uint8Array, i: number, key: Literal): number {
  i = literal(b, i, key);
  return i < 0 ? -1 : string(b, i);
}

/** `,"session":"` at `i` and the session id after it. */
function sessionField(b: Uint8Array, i: number): number {
  i = literal(b, i, SESSION);
  return i < 0 ? -1 : sessionId(b, i);
}

/** `,"workspace":"` at `i` and the workspace after it: its bits into {@link header}. */
function workspace(b: Uint8Array, i: number): number {
  i = literal(b, i, WORKSPACE);
  if (i < 0) return -1;
  for (let n = 0; n < WORKSPACE_NAMES.length; n++) {
    const after = literal(b, i, WORKSPACE_NAMES[n] as Literal);
    if (after >= 0) {
      header |= n << 6;
      return after;
    }
  }
  return -1;
}

/** The action after `{"type":"`, up to and including its closing brace; its bits into {@link header}. */
function action(b: Uint8Array, i: number): number {
  switch (b[i]) {
    case 0x74: // turn
      i = literal(b, i, TURN_TAG);
      if (i >= 0) i = workspace(b, i);
      if (i >= 0) i = field(b, i, SPEAKER);
      break;
    case 0x63: // conclude
      header |= 1 << 3;
      i = literal(b, i, CONCLUDE_TAG);
      if (i >= 0) i = workspace(b, i);
      if (i >= 0) i = field(b, i, PEER);
      if (i >= 0) i = sessionField(b, i);
      if (i >= 0) i = field(b, i, TEXT);
      break;
    case 0x75: // unconclude
      header |= 2 << 3;
      i = literal(b, i, UNCONCLUDE_TAG);
      if (i >= 0) i = workspace(b, i);
      if (i >= 0) i = field(b, i, TEXT);
      break;
    case 0x66: // fleet
    case 0x72: // retract
      header |= (b[i] === 0x66 ? 3 : 4) << 3;
      i = literal(b, i, b[i] === 0x66 ? FLEET_TAG : RETRACT_TAG);
      if (i >= 0) i = sessionField(b, i);
      if (i >= 0) i = field(b, i, TEXT);
      break;
    case 0x73: // skip
      header |= 5 << 3;
      i = literal(b, i, WHY);
      if (i >= 0) i = string(b, i);
      break;
    default:
      return -1;
  }
  return closingBrace(b, i);
}

/** The ids after `[`, up to and including `]`: their count, then each. */
function ids(b: Uint8Array, i: number): number {
  const countAt = w++;
  let count = 0;
  if (i < stop && b[i] === 0x5d) {
    out[countAt] = 0;
    return i + 1;
  }
  for (;;) {
    if (i >= stop || b[i] !== 0x22) return -1;
    reserve(3);
    i = string(b, i + 1);
    if (i < 0) return -1;
    count++;
    const next = i < stop ? b[i] : -1;
    i++;
    if (next === 0x5d) {
      out[countAt] = count;
      return i;
    }
    if (next !== 0x2c) return -1;
  }
}

/** A record from its opening brace at `i`, up to and including its closing brace; its slots after the header's two. */
function record(b: Uint8Array, i: number): number {
  i = literal(b, i, RECORD_START);
  if (i < 0) return -1;
  const c = b[i];
  let kind: number;
  if (c === 0x64) {
    kind = DECIDED;
    i = literal(b, i, DECIDED_TIME);
  } else if (c === 0x73) {
    kind = SENT;
    i = literal(b, i, SENT_TIME);
  } else if (c === 0x66) {
    kind = FAILED;
    i = literal(b, i, FAILED_TIME);
  } else return -1;
  if (i < 0) return -1;
  header = kind;
  i = time(b, i);
  if (i < 0) return -1;
  i = literal(b, i, ITEM);
  if (i < 0) return -1;
  i = item(b, i);
  if (i < 0) return -1;
  if (kind === DECIDED) {
    i = literal(b, i, ACTION);
    if (i >= 0) i = action(b, i);
  } else if (kind === SENT) {
    i = literal(b, i, IDS);
    if (i >= 0) i = ids(b, i);
  } else {
    i = literal(b, i, STATUS);
    if (i < 0) return -1;
    const none = literal(b, i, NULL);
    if (none >= 0) {
      out[w++] = -1;
      i = none;
    } else {
      i = unsigned(b, i, 0xffff, false);
      w--; // a u16 is all in its low bits: they take the high bits' slot
      out[w - 1] = out[w] as number;
    }
    if (i >= 0) i = field(b, i, KIND);
  }
  return closingBrace(b, i);
}

/** After a record that ends before `i`: the index of the newline, when only JSON whitespace comes before it; else -1. */
function newlineAfterRecord(b: Uint8Array, i: number): number {
  for (; i < stop; i++) {
    const c = b[i];
    if (c === 0x0a) return i;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return -1;
  }
  return -1;
}

/** The index of the first newline at or after `i`, before `stop`; `stop` when there is none. */
function newlineFrom(b: Uint8Array, i: number): number {
  while (i < stop && b[i] !== 0x0a) i++;
  return i;
}

/**
 * Scans the lines of `bytes[from, to)`, each ending with its newline (the last byte of the run is
 * one), and gives what it found, line after line, in the layout above. The array is this
 * thread's, reused by the next scan: copy it (or send it) before scanning again.
 * @returns the slots and how many of them there are
 */
export function scanLines(bytes: Uint8Array, from: number, to: number): { slots: Int32Array; length: number } {
  stop = to;
  view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  w = 0;
  for (let i = from; i < to; ) {
    // the most a line's slots take but for its ids, which reserve their own
    reserve(16);
    const at = w;
    w += 2;
    let end = record(bytes, i);
    if (end >= 0) end = newlineAfterRecord(bytes, end);
    if (end < 0) {
      w = at + 2;
      header = SERDE;
      end = newlineFrom(bytes, i);
    }
    out[at] = header;
    out[at + 1] = end;
    i = end + 1;
  }
  return { slots: out, length: w };
}

/** The slots of the last {@link scanRun}, while the run they describe is still being read. */
let held: Int32Array | null = null;

/**
 * {@link scanLines} for a reader on this thread that reads the slots as it takes the lines in,
 * and may wait between two of them (an async replay) while another reader of this thread scans
 * (two logs opened at once): the slots are the reader's until it gives them back
 * ({@link releaseRun}), a scan meanwhile writing into an array of its own.
 */
export function scanRun(bytes: Uint8Array, from: number, to: number): { slots: Int32Array; length: number } {
  if (held === out) out = new Int32Array(out.length);
  const scanned = scanLines(bytes, from, to);
  held = scanned.slots;
  return scanned;
}

/** The slots {@link scanRun} gave are read no more: the next scan may write over them. */
export function releaseRun(slots: Int32Array): void {
  if (held === slots) held = null;
}

/** The output of {@link scanLine}, apart from that of {@link scanLines}: a line read alone never spoils a run's scan. */
let lineOut = new Int32Array(1 << 6);

/** Scans one line, `bytes[from, to)`, which need not end with a newline: see {@link scanLines}. */
export function scanLine(bytes: Uint8Array, from: number, to: number): { slots: Int32Array; length: number } {
  const runOut = out;
  out = lineOut;
  try {
    return scanOneLine(bytes, from, to);
  } finally {
    lineOut = out;
    out = runOut;
  }
}

function scanOneLine(bytes: Uint8Array, from: number, to: number): { slots: Int32Array; length: number } {
  stop = to;
  view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  w = 0;
  reserve(16);
  w = 2;
  header = SERDE;
  let end = record(bytes, from);
  if (end >= 0) {
    for (; end < to; end++) {
      const c = bytes[end];
      if (c !== 0x0a && c !== 0x20 && c !== 0x09 && c !== 0x0d) break;
    }
  }
  if (end !== to) {
    header = SERDE;
    w = 2;
  }
  out[0] = header;
  out[1] = to;
  return { slots: out, length: w };
}
