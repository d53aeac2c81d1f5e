/**
 * The fast way to read lines in canonical form, the form memoryd and ledgerstore write
 * (`codec.ts`): a scan (`scan.ts`) checks each line's bytes against that form and says where its
 * values are, and the records are made from that, with no second look at the bytes. A line the
 * scan does not vouch for (another key order, whitespace, a number that is not a plain integer
 * in range, a value that is not valid, a surrogate escape) is read the serde way (`decode.ts`,
 * handed in by the codec: neither decoder imports the other), which accepts or refuses it with
 * serde_json's words. So this only ever accepts what the serde
 * way accepts, with the same record: the tests hold both to that (`test/codec.test.ts`).
 *
 * The ASCII strings of a chunk's records are cut from one string of the chunk's bytes (a slice
 * costs a tenth of a string made from bytes), and such a slice keeps the whole chunk's string
 * alive: whoever keeps a string of a record for longer than the record (a state, the action of
 * an item that waits, a session's name) keeps a copy ({@link detached}).
 *
 * @module
 */

import type { ScannedLines } from '../line-scan.js';
import { hexDigit } from './byte-rules.js';
import { type Action, type Item, MAX_TURN, type Record, turnOf, type Workspace } from './record.js';
import { releaseRun, scanLine } from './scan.js';
import { ASCII, DECIDED, EDIT_ITEM, ESCAPED, SENT, SERDE, TURN_DIGITS, UTF8 } from './scan-slots.js';

const WORKSPACES: readonly Workspace[] = ['trusted', 'untrusted', 'fleet'];
/** Strings shorter than this are copied when sliced (V8 makes a slice only of longer ones). */
const SHORTEST_SLICE = 13;

/**
 * `text` as a string of its own: not a slice that keeps a larger string alive. For the strings a
 * state keeps beyond the record they came in.
 */
export function detached(text: string): string {
  return text.length < SHORTEST_SLICE ? text : `${text} `.slice(0, -1);
}

/** Reads a line's bytes `[start, end)` the serde way (`decode.ts`), or throws the `DecodeError` that says why it is no record. */
export type SerdeDecoder = (bytes: Buffer, start: number, end: number) => Record;

/* c8 ignore next 3 -- lines read only for their canonical records (readCanonical), or by a reader with a fallback of its own (cbor-values.ts), never ask */
const noSerde: SerdeDecoder = () => {
  throw new Error('these lines are read without the serde way');
};

/** Where {@link CanonicalLines.lineEnds} notes the ends before it copies them out: one for every run. */
let lineEndScratch = new Int32Array(1 << 14);

/**
 * The lines of a scanned run of bytes, read one after another: {@link CanonicalLines.next}
 * moves to the next line, then {@link CanonicalLines.end} says where its newline is and
 * {@link CanonicalLines.record} makes its record (the serde way, for a line the scan left to it,
 * throwing the `DecodeError` that says why it is no record).
 *
 * A state that can take a line without its record (`projection.ts`) reads what the scan found
 * through {@link CanonicalLines.kind} and the getters after it, and may ask to be told when the
 * run ends ({@link CanonicalLines.whenDone}), while its bytes are still there.
 */
export class CanonicalLines implements ScannedLines<Record> {
  readonly bytes: Buffer;
  /** The bytes scanned as latin1 text, made when a record first needs a string: ASCII strings are slices of it. */
  private text: string | null = null;
  private readonly from: number;
  private readonly to: number;
  private readonly slots: Int32Array;
  private readonly length: number;
  /** The slot of the line at hand's header; -1 before the first. */
  private at = -1;
  /** Where the slots of the line after it start. */
  private nextAt = 0;
  /** Where the line at hand starts. */
  private start: number;
  /** Called once the last line was moved past. */
  private done: (() => void) | null = null;
  /** How a line the scan left to the serde way is read. */
  private readonly serde: SerdeDecoder;

  /**
   * @param bytes the bytes scanned, `[from, to)`
   * @param slots what {@link scanLines} gave for them, `length` slots of it
   * @param serde how {@link CanonicalLines.record} reads a line the scan left to the serde way
   */
  constructor(
    bytes: Buffer,
    from: number,
    to: number,
    slots: Int32Array,
    length: number,
    serde: SerdeDecoder = noSerde,
  ) {
    this.bytes = bytes;
    this.serde = serde;
    this.from = from;
    this.slots = slots;
    this.length = length;
    this.to = to;
    this.start = from;
  }

  /** Moves to the next line: `false` when there is none (and then {@link CanonicalLines.whenDone}'s call is made). */
  next(): boolean {
    if (this.at >= 0) this.start = (this.slots[this.at + 1] as number) + 1;
    if (this.nextAt >= this.length) {
      const done = this.done;
      this.done = null;
      done?.();
      return false;
    }
    this.at = this.nextAt;
    this.nextAt = this.slotsAfter(this.at);
    return true;
  }

  /** Calls `done` once the run's last line was moved past (its bytes are still there then, not after). */
  whenDone(done: () => void): void {
    this.done = done;
  }

  /** Where the newline of every line moved to is, in order: after the last, every line of the run. */
  lineEnds(): Int32Array {
    // found again in the slots (once a run), not noted line by line: a line read alone makes no array
    // a line takes two slots at least: the scratch has room for every line's end
    if (lineEndScratch.length < this.nextAt >>> 1) lineEndScratch = new Int32Array(this.nextAt);
    const ends = lineEndScratch;
    let count = 0;
    for (let at = 0; at < this.nextAt; at = this.slotsAfter(at)) ends[count++] = this.slots[at + 1] as number;
    releaseRun(this.slots); // the last read of them: a scan of this thread may write over them now
    return ends.slice(0, count);
  }

  // -- what the scan found on the line at hand, for a state that takes it without its record ---

  /**
   * The line's kind ({@link DECIDED}, {@link SENT}, {@link FAILED}) when the scan vouched for it
   * and it has a plain item (its name without escapes, its number a double's); otherwise 0, and
   * only {@link CanonicalLines.record} tells.
   */
  get kind(): number {
    const slots = this.slots;
    const header = slots[this.at] as number;
    if ((header & TURN_DIGITS) !== 0 || ((slots[this.at + 4] as number) & 3) === ESCAPED) return SERDE;
    return header & 3;
  }

  /** Whether the item is an edit (else a turn). */
  get isEdit(): boolean {
    return ((this.slots[this.at] as number) & EDIT_ITEM) !== 0;
  }

  /** Where the item's name (its session or id, as UTF-8) starts in {@link CanonicalLines.bytes}. */
  get nameStart(): number {
    return this.slots[this.at + 3] as number;
  }

  /** How many bytes the item's name takes. */
  get nameLength(): number {
    return (this.slots[this.at + 4] as number) >>> 2;
  }

  /** The item's turn or part. */
  get number(): number {
    return (this.slots[this.at + 5] as number) * 0x1_0000_0000 + ((this.slots[this.at + 6] as number) >>> 0);
  }

  /** Of a `decided` line, the action's type, in `ACTION_VARIANTS`' order (5: `skip`). */
  get actionIndex(): number {
    return ((this.slots[this.at] as number) >> 3) & 7;
  }

  /** Of the `decided` line whose slots are at `slot`, the action's type, as {@link CanonicalLines.actionIndex}. */
  actionIndexAt(slot: number): number {
    return ((this.slots[slot] as number) >> 3) & 7;
  }

  /** Where the line at hand's slots are: to make its action later in the run ({@link CanonicalLines.actionAt}). */
  get slot(): number {
    return this.at;
  }

  /** The action of the `decided` line whose slots are at `slot`, its strings of their own (a state keeps it). */
  actionAt(slot: number): Action {
    return this.action(this.slots[slot] as number, slot + 7, true);
  }

  /** Of a `sent` line, how many ids it has. */
  get idCount(): number {
    return this.slots[this.at + 7] as number;
  }

  /** Of the `conclude` or `unconclude` line whose slots are at `slot`, its workspace. */
  workspaceAt(slot: number): Workspace {
    return workspaceOf(this.slots[slot] as number);
  }

  /** Of the `conclude` or `unconclude` line whose slots are at `slot`, where its text's slots are. */
  conclusionTextAt(slot: number): number {
    return slot + (this.actionIndexAt(slot) === 1 ? 11 : 7);
  }

  /** Whether the string whose slots are at `at` is written without escapes: its bytes are then its UTF-8. */
  isUnescaped(at: number): boolean {
    return ((this.slots[at + 1] as number) & 3) !== ESCAPED;
  }

  /** Where the bytes of the string whose slots are at `at` start in {@link CanonicalLines.bytes}. */
  stringStart(at: number): number {
    return this.slots[at] as number;
  }

  /** How many bytes the string whose slots are at `at` takes, as written. */
  stringLength(at: number): number {
    return (this.slots[at + 1] as number) >>> 2;
  }

  /**
   * Writes the UTF-8 of the string whose slots are at `at`, its escapes undone (the scan checked
   * them: none of a surrogate), into `into`, which has room for {@link CanonicalLines.stringLength}
   * bytes (no more are needed: an escape is longer than what it stands for); how many it wrote.
   */
  utf8Into(at: number, into: Uint8Array): number {
    const { bytes } = this;
    const start = this.slots[at] as number;
    const end = start + ((this.slots[at + 1] as number) >>> 2);
    let n = 0;
    for (let i = start; i < end; i++) {
      const b = bytes[i] as number;
      if (b !== 0x5c) {
        into[n++] = b;
        continue;
      }
      const e = bytes[++i] as number;
      if (e !== 0x75) {
        into[n++] = ESCAPED_BYTE[e] as number;
        continue;
      }
      let unit = 0;
      for (const stop = i + 4; i < stop; ) unit = unit * 16 + hexDigit(bytes[++i] as number);
      if (unit < 0x80) into[n++] = unit;
      else if (unit < 0x800) {
        into[n++] = 0xc0 | (unit >> 6);
        into[n++] = 0x80 | (unit & 0x3f);
      } else {
        into[n++] = 0xe0 | (unit >> 12);
        into[n++] = 0x80 | ((unit >> 6) & 0x3f);
        into[n++] = 0x80 | (unit & 0x3f);
      }
    }
    return n;
  }

  /** Where the line at hand's newline is. */
  get end(): number {
    return this.slots[this.at + 1] as number;
  }

  /** The record of the line at hand. @throws `DecodeError` when it is none */
  record(): Record {
    const { slots, at } = this;
    const header = slots[at] as number;
    return (
      ((header & 3) === SERDE ? null : this.made(header, at)) ??
      this.serde(this.bytes, this.start, (slots[at + 1] as number) + 1)
    );
  }

  /** The record of the line at hand when the scan vouched for it, else `null` (the serde way decides). */
  canonicalRecord(): Record | null {
    const header = this.slots[this.at] as number;
    return (header & 3) === SERDE ? null : this.made(header, this.at);
  }

  /** Where the slots of the line after the one at `at` start. */
  private slotsAfter(at: number): number {
    const { slots } = this;
    const header = slots[at] as number;
    const kind = header & 3;
    if (kind === SERDE) return at + 2;
    if (kind === DECIDED) return at + 7 + 2 * (ACTION_STRINGS[(header >> 3) & 7] as number);
    if (kind === SENT) return at + 8 + 2 * (slots[at + 7] as number);
    return at + 10;
  }

  /** The record a scanned line holds; `null` when the serde way must say (a turn past a u64). */
  private made(header: number, at: number): Record | null {
    const { slots } = this;
    const time = this.ascii(slots[at + 2] as number, 24);
    const item = this.item(header, at);
    if (item === null) return null;
    const kind = header & 3;
    if (kind === DECIDED) return { type: 'decided', time, item, action: this.action(header, at + 7, false) };
    if (kind === SENT) {
      const count = slots[at + 7] as number;
      const ids: string[] = new Array(count);
      for (let n = 0; n < count; n++) ids[n] = this.string(at + 8 + 2 * n);
      return { type: 'sent', time, item, ids };
    }
    const status = slots[at + 7] as number;
    return { type: 'failed', time, item, status: status < 0 ? null : status, kind: this.string(at + 8) };
  }

  private item(header: number, at: number): Item | null {
    const { slots } = this;
    const name = this.string(at + 3);
    const high = slots[at + 5] as number;
    const low = slots[at + 6] as number;
    if ((header & EDIT_ITEM) !== 0) return { type: 'edit', id: name, part: high * 0x1_0000_0000 + (low >>> 0) };
    if ((header & TURN_DIGITS) === 0) return { type: 'turn', session: name, turn: high * 0x1_0000_0000 + (low >>> 0) };
    const turn = BigInt(this.ascii(high, low));
    return turn <= MAX_TURN ? { type: 'turn', session: name, turn: turnOf(turn) } : null;
  }

  /** The action whose strings' slots start at `at`; with `own`, each string one of its own. */
  private action(header: number, at: number, own: boolean): Action {
    const text = (n: number): string => (own ? this.ownString(n) : this.string(n));
    switch ((header >> 3) & 7) {
      case 0:
        return { type: 'turn', workspace: workspaceOf(header), speaker: text(at) };
      case 1:
        return {
          type: 'conclude',
          workspace: workspaceOf(header),
          peer: text(at),
          session: text(at + 2),
          text: text(at + 4),
        };
      case 2:
        return { type: 'unconclude', workspace: workspaceOf(header), text: text(at) };
      case 3:
        return { type: 'fleet', session: text(at), text: text(at + 2) };
      case 4:
        return { type: 'retract', session: text(at), text: text(at + 2) };
      default:
        return { type: 'skip', why: text(at) };
    }
  }

  /** ASCII text at `start`, `length` bytes, cut from the chunk's string. */
  private ascii(start: number, length: number): string {
    this.text ??= this.bytes.toString('latin1', this.from, this.to);
    const from = start - this.from;
    return this.text.slice(from, from + length);
  }

  /** The string whose two slots are at `at`. */
  private string(at: number): string {
    const start = this.slots[at] as number;
    const written = this.slots[at + 1] as number;
    const length = written >>> 2;
    const how = written & 3;
    if (how === ASCII) return this.ascii(start, length);
    return how === UTF8 ? this.bytes.toString('utf8', start, start + length) : this.unescaped(start, length);
  }

  /** The string whose two slots are at `at`, as a string of its own (never a slice of the chunk's). */
  private ownString(at: number): string {
    const start = this.slots[at] as number;
    const written = this.slots[at + 1] as number;
    const length = written >>> 2;
    const how = written & 3;
    // made from the bytes, never cut from the chunk's string: a string kept is mostly asked for
    // at a run's end (a waiting item's action), and the chunk's string, if not made yet, costs
    // more than all of that run's strings kept
    if (how === ASCII) return this.bytes.toString('latin1', start, start + length);
    return how === UTF8 ? this.bytes.toString('utf8', start, start + length) : this.unescaped(start, length);
  }

  /** A string with escapes (the scan checked them: none of a surrogate), its quotes around `[start, start + length)`. */
  private unescaped(start: number, length: number): string {
    // JSON.parse reads the escapes a scanned string may hold exactly as serde does
    return JSON.parse(this.bytes.toString('utf8', start - 1, start + length + 1)) as string;
  }
}

/** The byte each one-letter escape stands for, by its letter (the letter after the backslash). */
const ESCAPED_BYTE = new Uint8Array(128);
for (const [letter, byte] of [
  ['"', 0x22],
  ['\\', 0x5c],
  ['/', 0x2f],
  ['b', 0x08],
  ['f', 0x0c],
  ['n', 0x0a],
  ['r', 0x0d],
  ['t', 0x09],
] as const)
  ESCAPED_BYTE[letter.charCodeAt(0)] = byte;

/** How many strings each action has, in `ACTION_VARIANTS`' order. */
const ACTION_STRINGS: readonly number[] = [1, 3, 1, 2, 2, 1];

function workspaceOf(header: number): Workspace {
  return WORKSPACES[(header >> 6) & 3] as Workspace;
}

/**
 * The record on the line `bytes[start, end)` when the line is in canonical form, else `null`:
 * then read it with the serde way, which decides.
 */
export function readCanonical(bytes: Buffer, start: number, end: number): Record | null {
  const { slots, length } = scanLine(bytes, start, end);
  const lines = new CanonicalLines(bytes, start, end, slots, length);
  lines.next();
  return lines.canonicalRecord();
}
