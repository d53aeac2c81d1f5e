/**
 * The fast way to read a line that is in canonical form, the form memoryd and ledgerstore write
 * (`codec.ts`): the bytes are matched against that form directly, without building serde's
 * buffered content. At the first byte that differs from the form (another key order, whitespace,
 * a number that is not a plain integer in range, a value that is not valid) it gives
 * up and returns `null`, and the line is read the serde way, which accepts or refuses it with
 * serde_json's words. Escapes are read here (canonical lines have them), but for surrogates. So this only ever accepts what the serde way accepts, with the same record:
 * the tests hold both to that (`test/codec.test.ts`).
 *
 * @module
 */
import { isUtf8 } from 'node:buffer';
import {
  type Action,
  type Item,
  isSessionId,
  isTime,
  MAX_PART,
  MAX_STATUS,
  MAX_TURN,
  type Record,
  type Workspace,
} from './record.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

// The fixed bytes of the canonical form, each starting after the string or number before it.
const RECORD_START = bytes('{"type":"');
const TIME = bytes(',"time":"');
const ITEM = bytes(',"item":{"type":"');
const SESSION = bytes(',"session":"');
const TURN = bytes(',"turn":');
const ID = bytes(',"id":"');
const PART = bytes(',"part":');
const ACTION = bytes(',"action":{"type":"');
const IDS = bytes(',"ids":[');
const STATUS = bytes(',"status":');
const NULL = bytes('null');
const KIND = bytes(',"kind":"');
const WORKSPACE = bytes(',"workspace":"');
const SPEAKER = bytes(',"speaker":"');
const PEER = bytes(',"peer":"');
const TEXT = bytes(',"text":"');
const WHY = bytes(',"why":"');

/** The value of four hex digits at `buf[at...]`, or -1. */
function hex4(buf: Buffer, at: number): number {
  let n = 0;
  for (let k = at; k < at + 4; k++) {
    const c = buf[k] as number;
    const d =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

/** Thrown inside to give up; caught once, at the top. */
const GIVE_UP = Symbol('not canonical');

class Cursor {
  i: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.i = start;
  }

  /** Consumes `literal`, or gives up. */
  expect(literal: Buffer): void {
    const n = literal.length;
    if (this.i + n > this.end) throw GIVE_UP;
    for (let k = 0; k < n; k++) if (this.buf[this.i + k] !== literal[k]) throw GIVE_UP;
    this.i += n;
  }

  /** Consumes `literal` if it is next. */
  accept(literal: Buffer): boolean {
    const n = literal.length;
    if (this.i + n > this.end) return false;
    for (let k = 0; k < n; k++) if (this.buf[this.i + k] !== literal[k]) return false;
    this.i += n;
    return true;
  }

  /** Consumes one byte `c`, or gives up. */
  byte(c: number): void {
    if (this.i >= this.end || this.buf[this.i] !== c) throw GIVE_UP;
    this.i++;
  }

  peek(): number {
    return this.i < this.end ? (this.buf[this.i] as number) : -1;
  }

  /**
   * A string's text up to its closing quote (which it consumes), the opening quote consumed
   * already. Gives up at a control character, at a surrogate escape (the serde way pairs or
   * refuses those), and at bytes that are not UTF-8.
   */
  text(): string {
    const { buf, end } = this;
    const from = this.i;
    let ascii = true;
    for (let j = from; j < end; j++) {
      const c = buf[j] as number;
      if (c === 0x22) {
        this.i = j + 1;
        return this.slice(from, j, ascii);
      }
      if (c === 0x5c) return this.escaped(from, j, ascii);
      if (c < 0x20) throw GIVE_UP;
      if (c >= 0x80) ascii = false;
    }
    throw GIVE_UP;
  }

  /** The rest of a string from its first escape at `at`, with `[from, at)` before it. */
  private escaped(from: number, at: number, ascii: boolean): string {
    const { buf, end } = this;
    let out = this.slice(from, at, ascii);
    let segment = at;
    ascii = true;
    for (let j = at; j < end; ) {
      const c = buf[j] as number;
      if (c === 0x22) {
        this.i = j + 1;
        return out + this.slice(segment, j, ascii);
      }
      if (c === 0x5c) {
        out += this.slice(segment, j, ascii);
        const e = j + 1 < end ? buf[j + 1] : -1;
        const simple =
          e === 0x22
            ? '"'
            : e === 0x5c
              ? '\\'
              : e === 0x2f
                ? '/'
                : e === 0x62
                  ? '\b'
                  : e === 0x66
                    ? '\f'
                    : e === 0x6e
                      ? '\n'
                      : e === 0x72
                        ? '\r'
                        : e === 0x74
                          ? '\t'
                          : null;
        if (simple !== null) {
          out += simple;
          j += 2;
        } else if (e === 0x75 && j + 6 <= end) {
          const unit = hex4(buf, j + 2);
          if (unit < 0 || (unit >= 0xd800 && unit <= 0xdfff)) throw GIVE_UP;
          out += String.fromCharCode(unit);
          j += 6;
        } else {
          throw GIVE_UP;
        }
        segment = j;
        ascii = true;
        continue;
      }
      if (c < 0x20) throw GIVE_UP;
      if (c >= 0x80) ascii = false;
      j++;
    }
    throw GIVE_UP;
  }

  /** The raw bytes `[from, to)` of a string as text; gives up when they are not UTF-8. */
  private slice(from: number, to: number, ascii: boolean): string {
    if (ascii) return this.buf.latin1Slice(from, to);
    if (!isUtf8(this.buf.subarray(from, to))) throw GIVE_UP;
    return this.buf.utf8Slice(from, to);
  }

  /** A plain unsigned integer up to `max` (no sign, no leading zero, no fraction). */
  integer(max: number): number {
    const { buf, end } = this;
    const from = this.i;
    let value = 0;
    let j = from;
    for (; j < end; j++) {
      const c = buf[j] as number;
      if (c < 0x30 || c > 0x39) break;
      value = value * 10 + (c - 0x30);
    }
    const digits = j - from;
    if (digits === 0 || digits > 16 || (digits > 1 && buf[from] === 0x30) || value > max) throw GIVE_UP;
    const next = j < end ? buf[j] : -1;
    if (next === 0x2e || next === 0x65 || next === 0x45) throw GIVE_UP; // a fraction or an exponent
    this.i = j;
    return value;
  }
}

function session(c: Cursor): string {
  const s = c.text();
  if (!isSessionId(s)) throw GIVE_UP;
  return s;
}

function workspace(c: Cursor): Workspace {
  const w = c.text();
  if (w !== 'trusted' && w !== 'untrusted' && w !== 'fleet') throw GIVE_UP;
  return w;
}

/** The item after `{"type":"`, up to and including its closing brace. */
function item(c: Cursor): Item {
  const tag = c.text();
  let result: Item;
  if (tag === 'turn') {
    c.expect(SESSION);
    const s = session(c);
    c.expect(TURN);
    result = { type: 'turn', session: s, turn: c.integer(MAX_TURN) };
  } else if (tag === 'edit') {
    c.expect(ID);
    const id = c.text();
    c.expect(PART);
    result = { type: 'edit', id, part: c.integer(MAX_PART) };
  } else {
    throw GIVE_UP;
  }
  c.byte(0x7d);
  return result;
}

/** `,"<field>":"` and the string after it. */
function field(c: Cursor, literal: Buffer): string {
  c.expect(literal);
  return c.text();
}

/** The action after `{"type":"`, up to and including its closing brace. */
function action(c: Cursor): Action {
  const tag = c.text();
  let result: Action;
  switch (tag) {
    case 'turn': {
      c.expect(WORKSPACE);
      const w = workspace(c);
      result = { type: 'turn', workspace: w, speaker: field(c, SPEAKER) };
      break;
    }
    case 'conclude': {
      c.expect(WORKSPACE);
      const w = workspace(c);
      const peer = field(c, PEER);
      c.expect(SESSION);
      const s = session(c);
      result = { type: 'conclude', workspace: w, peer, session: s, text: field(c, TEXT) };
      break;
    }
    case 'unconclude': {
      c.expect(WORKSPACE);
      const w = workspace(c);
      result = { type: 'unconclude', workspace: w, text: field(c, TEXT) };
      break;
    }
    case 'fleet':
    case 'retract': {
      c.expect(SESSION);
      const s = session(c);
      result = { type: tag, session: s, text: field(c, TEXT) };
      break;
    }
    case 'skip':
      result = { type: 'skip', why: field(c, WHY) };
      break;
    default:
      throw GIVE_UP;
  }
  c.byte(0x7d);
  return result;
}

function ids(c: Cursor): string[] {
  const out: string[] = [];
  if (c.peek() === 0x5d) {
    c.i++;
    return out;
  }
  for (;;) {
    c.byte(0x22);
    out.push(c.text());
    const next = c.peek();
    c.i++;
    if (next === 0x5d) return out;
    if (next !== 0x2c) throw GIVE_UP;
  }
}

function record(c: Cursor): Record {
  c.expect(RECORD_START);
  const type = c.text();
  if (type !== 'decided' && type !== 'sent' && type !== 'failed') throw GIVE_UP;
  const time = field(c, TIME);
  if (!isTime(time)) throw GIVE_UP;
  c.expect(ITEM);
  const it = item(c);
  let result: Record;
  if (type === 'decided') {
    c.expect(ACTION);
    result = { type, time, item: it, action: action(c) };
  } else if (type === 'sent') {
    c.expect(IDS);
    result = { type, time, item: it, ids: ids(c) };
  } else {
    c.expect(STATUS);
    const status = c.accept(NULL) ? null : c.integer(MAX_STATUS);
    result = { type, time, item: it, status, kind: field(c, KIND) };
  }
  c.byte(0x7d);
  return result;
}

/**
 * The record on the line `bytes[start, end)` when the line is in canonical form, else `null`:
 * then read it with the serde way, which decides.
 */
export function readCanonical(bytes: Buffer, start: number, end: number): Record | null {
  try {
    const c = new Cursor(bytes, start, end);
    const result = record(c);
    for (let j = c.i; j < end; j++) {
      // only JSON whitespace may follow: the line's newline, a CR before it
      const b = bytes[j];
      if (b !== 0x0a && b !== 0x0d && b !== 0x20 && b !== 0x09) return null;
    }
    return result;
  } catch (e) {
    if (e === GIVE_UP) return null;
    throw e;
  }
}
