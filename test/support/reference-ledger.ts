/**
 * The one reference for the crash and fuzz harnesses: the ledger's rules written out again, as
 * simply as they can be (a map from item to state), and what an open of a file's bytes must give,
 * computed from the bytes alone: the records of the complete lines, in order, until the first
 * line that does not decode or breaks a rule (the open must refuse with that line's number and
 * reason), and whatever follows the last newline dropped as a torn tail, unless the file has no
 * complete line and what it holds could not begin a record's line (then it is damage at line 1).
 *
 * Decoding uses the codec (`decodeRecord`), which `test/fuzz/codec.test.ts` and
 * `test/codec.test.ts` hold to serde_json; the rules, the counts and the queries here share no
 * code with `lib/honcho/rules.ts` or `projection.ts`.
 */
import {
  type Action,
  AlreadyDecidedError,
  type Counts,
  DecodeError,
  decodeRecord,
  encodeRecord,
  type Item,
  isLedgerError,
  NotWaitingError,
  type Record,
} from '../../lib/index.js';

type State = 'skipped' | 'waiting' | 'sent' | 'failed';

interface Entry {
  readonly item: Item;
  readonly action: Action;
  state: State;
  ids: readonly string[] | null;
}

const keyOf = (item: Item): string =>
  JSON.stringify(item.type === 'turn' ? ['t', item.session, String(item.turn)] : ['e', item.id, item.part]);

/** The rules and the state, as a plain map. */
export class ReferenceLedger {
  private readonly entries = new Map<string, Entry>();
  /** Every record taken in, in order. */
  readonly records: Record[] = [];

  /**
   * Takes `record` in when the rules allow it; otherwise says why not, as the engine's errors
   * word it, and changes nothing.
   */
  offer(record: Record): AlreadyDecidedError | NotWaitingError | null {
    const refused = this.refusal(record);
    if (refused !== null) return refused;
    const key = keyOf(record.item);
    const entry = this.entries.get(key);
    if (record.type === 'decided') {
      this.entries.set(key, {
        item: record.item,
        action: record.action,
        state: record.action.type === 'skip' ? 'skipped' : 'waiting',
        ids: null,
      });
    } else if (entry !== undefined) {
      entry.state = record.type;
      if (record.type === 'sent') entry.ids = record.ids;
    }
    this.records.push(record);
    return null;
  }

  /** Why `record` may not follow here, as the engine's errors word it, or `null` when it may; changes nothing. */
  refusal(record: Record): AlreadyDecidedError | NotWaitingError | null {
    const entry = this.entries.get(keyOf(record.item));
    if (record.type === 'decided') return entry === undefined ? null : new AlreadyDecidedError(record.item);
    return entry === undefined || entry.state !== 'waiting' ? new NotWaitingError(record.item) : null;
  }

  isDecided(item: Item): boolean {
    return this.entries.has(keyOf(item));
  }

  counts(): Counts {
    const c = { decided: 0, sent: 0, waiting: 0, failed: 0, skipped: 0 };
    for (const { state } of this.entries.values()) {
      c.decided++;
      c[state]++;
    }
    return c;
  }

  /** The waiting items and their actions, in decision order (a Map keeps insertion order). */
  outbox(): { item: Item; action: Action }[] {
    return [...this.entries.values()]
      .filter((e) => e.state === 'waiting')
      .map(({ item, action }) => ({ item, action }));
  }

  sentIds(item: Item): readonly string[] | null {
    return this.entries.get(keyOf(item))?.ids ?? null;
  }

  /** Every item decided, in decision order. */
  items(): Item[] {
    return [...this.entries.values()].map((e) => e.item);
  }
}

/** What opening a file must give. */
export type Expected =
  | {
      readonly kind: 'open';
      readonly reference: ReferenceLedger;
      /** The length of the complete lines: where a torn tail starts. */
      readonly complete: number;
      /** The bytes after the last newline, dropped. */
      readonly dropped: number;
      /** The number of complete lines. */
      readonly lines: number;
    }
  | {
      readonly kind: 'damaged';
      /** The first line that does not decode or breaks a rule, from 1. */
      readonly line: number;
      /** Why: the decoder's text, or the rule's. */
      readonly why: string;
      /** The number of lines in the file: its complete ones, or 1 for a file of one line without its newline. */
      readonly lines: number;
    };

/** A line's record, or the reason it has none. Takes the line with its newline, as the JSONL backend does. */
export type LineDecoder = (bytes: Buffer, start: number, end: number, line: number) => Record;

const decodeLine: LineDecoder = (bytes, start, end) => decodeRecord(bytes, start, end);

/**
 * A decoder for a file that should hold the canonical lines of `attempted`, in order (what a
 * writer that nothing refused wrote, up to a crash): line N is the Nth record attempted when it
 * is that record's line, byte for byte, and otherwise does not decode.
 */
export function attemptedLines(attempted: readonly Record[]): LineDecoder {
  return (bytes, start, end, line) => {
    const record = attempted[line - 1];
    if (record === undefined || !bytes.subarray(start, end).equals(Buffer.from(`${encodeRecord(record)}\n`, 'utf8'))) {
      throw new DecodeError(`line ${line} is not the line of the record attempted ${line}th`);
    }
    return record;
  };
}

/**
 * How the lines of the Honcho records begin (docs/format.md: `type` first, then `time`), restated
 * here rather than taken from the codec.
 */
const LINE_STARTS = ['decided', 'sent', 'failed'].map((type) => Buffer.from(`{"type":"${type}","time":"`));

/**
 * Whether `bytes`, all a file holds and no newline in them, could be a line a crash cut off:
 * they begin as a record's line does, a NUL counting for any byte (one a power loss left
 * unwritten). Otherwise the file is not a ledger's, and its open is refused at line 1
 * ({@link notCutOff} says why).
 */
export function couldBeCutOff(bytes: Buffer): boolean {
  return LINE_STARTS.some((start) => {
    for (let at = 0; at < Math.min(bytes.length, start.length); at++)
      if (bytes[at] !== 0 && bytes[at] !== start[at]) return false;
    return true;
  });
}

/** Why a file of `size` bytes, none of them a newline, that {@link couldBeCutOff} refuses, is damage at line 1. */
export const notCutOff = (size: number): string =>
  `${size} bytes with no newline, which do not begin as a record's line does: not a line cut off by a crash`;

/** The number of newlines in `bytes`. */
export function countLines(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) n++;
  return n;
}

/**
 * What opening a JSONL ledger holding `bytes` must give, computed line by line: `decode` (by
 * default the codec) may answer from a cache for lines known to be unchanged.
 */
export function expectedOpen(bytes: Buffer, decode: LineDecoder = decodeLine): Expected {
  const reference = new ReferenceLedger();
  const total = countLines(bytes);
  let start = 0;
  let line = 0;
  for (let newline = bytes.indexOf(10); newline !== -1; newline = bytes.indexOf(10, start)) {
    line++;
    let record: Record;
    try {
      record = decode(bytes, start, newline + 1, line);
    } catch (e) {
      if (!isLedgerError(e, 'LEDGER_DECODE')) throw e;
      return { kind: 'damaged', line, why: e.message, lines: total };
    }
    const refused = reference.offer(record);
    if (refused !== null) return { kind: 'damaged', line, why: refused.message, lines: total };
    start = newline + 1;
  }
  if (start === 0 && bytes.length > 0 && !couldBeCutOff(bytes))
    return { kind: 'damaged', line: 1, why: notCutOff(bytes.length), lines: 1 };
  return { kind: 'open', reference, complete: start, dropped: bytes.length - start, lines: line };
}
