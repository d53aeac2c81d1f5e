/**
 * A LevelDB manifest's version edits (its logical records, in the log format: `log-format.ts`),
 * read as LevelDB 1.20 recovers them: the comparator, the write-ahead logs and the live tables.
 * Reads bytes, changes nothing.
 *
 * @module
 */
import { Cursor } from './bytes.js';
import type { LogRecord } from './log-format.js';

/** The user's key of an internal key (the user's key, then 8 bytes of sequence and type). */
const userKeyOf = (internal: Uint8Array): Uint8Array => internal.subarray(0, Math.max(0, internal.length - 8));

/** What a manifest says of the database: its comparator, write-ahead logs and tables. */
export interface Manifest {
  readonly comparator: string | null;
  /** The first write-ahead log whose writes are not all in tables; older logs are obsolete. */
  readonly logNumber: number;
  /** A log an older LevelDB may still need (0: none). */
  readonly prevLogNumber: number;
  /** The live tables by number: size in bytes, and the smallest and largest keys (LevelDB's user keys) each holds. */
  readonly tables: ReadonlyMap<
    number,
    { readonly size: number; readonly smallest: Uint8Array; readonly largest: Uint8Array }
  >;
}

/**
 * The manifest's version edits, applied in order, as LevelDB recovers them.
 * @throws RangeError saying what is wrong, when an edit does not decode
 */
export function readManifest(records: readonly LogRecord[]): Manifest {
  let comparator: string | null = null;
  let logNumber = 0;
  let prevLogNumber = 0;
  const seen = new Set<number>();
  const live = new Map<string, { number: number; size: number; smallest: Uint8Array; largest: Uint8Array }>();
  for (const { data, offset } of records) {
    const edit = new Cursor(data);
    try {
      while (!edit.done) {
        const tag = edit.varint();
        seen.add(tag);
        if (tag === 1) comparator = Buffer.from(edit.slice()).toString('latin1');
        else if (tag === 2) logNumber = edit.varint();
        else if (tag === 3 || tag === 4)
          edit.varint(); // the next file number, the last sequence
        else if (tag === 5) {
          edit.varint();
          edit.slice(); // a compaction pointer
        } else if (tag === 6) {
          const level = edit.varint();
          live.delete(`${level}:${edit.varint()}`);
        } else if (tag === 7) {
          const level = edit.varint();
          const number = edit.varint();
          const size = edit.varint();
          // internal keys: the user's key, then 8 bytes of sequence and type
          const smallest = edit.slice();
          const largest = edit.slice();
          live.set(`${level}:${number}`, { number, size, smallest: userKeyOf(smallest), largest: userKeyOf(largest) });
        } else if (tag === 9) prevLogNumber = edit.varint();
        else throw new RangeError(`an unknown tag ${tag}`);
      }
    } catch (e) {
      throw new RangeError(`the version edit at byte ${offset} does not decode (${(e as Error).message})`);
    }
  }
  // what LevelDB's recovery requires of a manifest (VersionSet::Recover)
  for (const [tag, what] of [
    [3, 'next file number'],
    [2, 'log number'],
    [4, 'last sequence number'],
  ] as const) {
    if (!seen.has(tag)) throw new RangeError(`it has no ${what}`);
  }
  const tables = new Map<number, { size: number; smallest: Uint8Array; largest: Uint8Array }>();
  for (const { number, size, smallest, largest } of live.values()) tables.set(number, { size, smallest, largest });
  return { comparator, logNumber, prevLogNumber, tables };
}
