/**
 * Where a JSONL log (`jsonl.ts`) resumes: a read model's point found in the file by its cursor,
 * or by counting lines, and the line before it read back for its fingerprint.
 *
 * ## Resuming
 *
 * An open can start at a point a read model kept (`resume`): the point's cursor says where its
 * line ends and where it starts, and its fingerprint is the SHA-256 of that line's bytes. The
 * open reads that one line back and compares, then reads only what follows; a file shorter than
 * the point, or with another line there, is refused as a mismatch and left as it was. A point
 * without a cursor is found by counting lines. What comes before the point is not read: where
 * each 64th record starts, for `read(from, to)`, is found by its newlines on the first such read.
 *
 * @module
 */
import { ResumeMismatchError } from '../lib/errors.js';
import type { Fd, FileIO } from '../lib/file-io.js';
import { MAX_LINE_BYTES, type Position, type ResumePoint } from '../lib/log.js';
import { isOverlong, lineChunks, readAt } from './jsonl-lines.js';

/** A JSONL log's cursor at a position: where the next record starts, and where the last one does. */
export interface Cursor {
  readonly position: Position;
  readonly offset: number;
  readonly lastLineStart: number;
}

/** Whether `value` is a cursor for `position` (one taken at another position is no use). */
export function isCursorAt(value: unknown, position: Position): value is Cursor {
  const c = value as { position?: unknown; offset?: unknown; lastLineStart?: unknown } | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    c.position === position &&
    Number.isSafeInteger(c.offset) &&
    Number.isSafeInteger(c.lastLineStart)
  );
}

/**
 * Finds where `resume`'s position is in the file: its cursor (found by counting lines when the
 * point has none), and the line before it, without its newline, for its fingerprint.
 * @throws {@link ResumeMismatchError} when the file holds no such line there
 */
export function resumeCursor(
  io: FileIO,
  fd: Fd,
  file: string,
  size: number,
  chunkSize: number,
  resume: ResumePoint,
): { cursor: Cursor; line: Buffer } {
  const mismatch = (why: string): never => {
    throw new ResumeMismatchError(file, resume.position, why);
  };
  let cursor: Cursor | null = isCursorAt(resume.cursor, resume.position) ? resume.cursor : null;
  if (cursor === null) {
    let n = 0;
    scan: for (const piece of lineChunks(io, fd, file, 0, size, chunkSize)) {
      if (isOverlong(piece))
        return mismatch(`line ${n + 1} is ${piece.length} bytes long, more than a ledger's line may hold`);
      const { position, ends } = piece;
      let start = 0;
      for (const end of ends) {
        if (++n === resume.position) {
          cursor = { position: n, offset: position + end + 1, lastLineStart: position + start };
          break scan;
        }
        start = end + 1;
      }
    }
    if (cursor === null) return mismatch(`the log holds ${n} records`);
  }
  const { offset, lastLineStart } = cursor;
  if (offset > size) mismatch(`the log is ${size} bytes long, shorter than the ${offset} it had`);
  const length = offset - lastLineStart;
  // a cursor is a read model's, and may be damaged: no more is read than a line may hold
  if (lastLineStart < 0 || length < 1 || length > MAX_LINE_BYTES + 1) mismatch('no record ends there');
  const line = Buffer.allocUnsafe(length);
  const got = readAt(io, fd, file, line, 0, length, lastLineStart);
  if (got !== length || line[length - 1] !== 10 || line.indexOf(10) !== length - 1) mismatch('no record ends there');
  return { cursor, line: line.subarray(0, length - 1) };
}
