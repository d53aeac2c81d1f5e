/**
 * Where a JSONL log's lines are (`jsonl.ts`): the end of its whole lines, where the last one
 * starts, and where every `SEEK_STRIDE`th record starts (for `read(from)`), kept up to date by
 * the read-through at open, by appends, by a reader's catch-up, and ahead of that by a watch.
 *
 * @module
 */
import type { Position } from '../lib/log.js';
import { SEEK_STRIDE } from './jsonl-lines.js';
import type { Cursor } from './jsonl-resume.js';

/** Whole lines counted past a reader's, by a watch: where they end, and what the reader notes of them. */
interface CountedAhead {
  length: number;
  count: Position;
  lastLineStart: number;
  /** Where the lines on a `SEEK_STRIDE` boundary start. */
  readonly starts: number[];
}

/** The marks of one log's lines. */
export class LineMarks {
  /** The length of the whole lines: where the next append goes. */
  length = 0;
  /** Where the last record's line starts (-1 when there is none). */
  lastLineStart = -1;
  /** Where every `SEEK_STRIDE`th record starts; `null` until needed after a resumed open. */
  starts: number[] | null = [];
  /** Lines a watch counted past those taken in: the next catch-up takes them rather than read and count them again. */
  private ahead: CountedAhead | null = null;

  /** The open resumed at `cursor`: the records before it are not read, so where they start is not known. */
  resumedAt(cursor: Cursor): void {
    this.length = cursor.offset;
    this.lastLineStart = cursor.lastLineStart;
    this.starts = null;
  }

  /** The line of the record at `position` was taken in: `[start, after)` of the file, its newline included. */
  line(position: Position, start: number, after: number): void {
    if (this.starts !== null && position % SEEK_STRIDE === 0) this.starts.push(start);
    this.lastLineStart = start;
    this.length = after;
  }

  /** The lines of a run at `offset` were taken in, the first the record at `position`, each ending at `offset + ends[n]`. */
  run(position: Position, offset: number, ends: ArrayLike<number>): void {
    /* c8 ignore next -- a run holds a whole line at least (lineRuns yields none without), and the open moves past each before it asks for the next run */
    if (ends.length === 0) return;
    if (this.starts !== null) {
      for (let n = (SEEK_STRIDE - (position % SEEK_STRIDE)) % SEEK_STRIDE; n < ends.length; n += SEEK_STRIDE)
        this.starts.push(n === 0 ? offset : offset + (ends[n - 1] as number) + 1);
    }
    this.lastLineStart = ends.length === 1 ? offset : offset + (ends[ends.length - 2] as number) + 1;
    this.length = offset + (ends[ends.length - 1] as number) + 1;
  }

  /** `appended` records were written as `bytes` at the end of the whole lines, the first the record at `position`. */
  appended(bytes: Buffer, position: Position, appended: number): void {
    if (this.starts !== null) {
      let line = 0;
      let offset = 0;
      for (let next = (SEEK_STRIDE - (position % SEEK_STRIDE)) % SEEK_STRIDE; next < appended; next += SEEK_STRIDE) {
        for (; line < next; line++) offset = bytes.indexOf(10, offset) + 1;
        this.starts.push(this.length + offset);
      }
    }
    this.lastLineStart = this.length + bytes.lastIndexOf(10, bytes.length - 2) + 1;
    this.length += bytes.length;
  }

  /**
   * A whole line a watch counted (the record at `position`, from `start` to `next`): noted for
   * the next catch-up when it is the very next line past those taken in and noted (a second
   * watch counts the same lines again: they are noted once). `taken` is how many were taken in.
   */
  counted(taken: Position, position: Position, start: number, next: number): void {
    const ahead = this.ahead ?? { length: this.length, count: taken, lastLineStart: this.lastLineStart, starts: [] };
    if (position !== ahead.count || start !== ahead.length) return;
    if (position % SEEK_STRIDE === 0) ahead.starts.push(start);
    ahead.lastLineStart = start;
    ahead.length = next;
    ahead.count++;
    this.ahead = ahead;
  }

  /**
   * Takes in the lines a watch counted, when the file (now `size` bytes, synced) still holds
   * them; gives how many records the marks then cover, `taken` when none.
   */
  takeCounted(taken: Position, size: number): Position {
    const ahead = this.ahead;
    this.ahead = null;
    if (ahead === null || ahead.length > size) return taken;
    if (this.starts !== null) for (const start of ahead.starts) this.starts.push(start);
    this.lastLineStart = ahead.lastLineStart;
    this.length = ahead.length;
    return ahead.count;
  }
}
