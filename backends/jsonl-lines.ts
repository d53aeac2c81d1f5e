/**
 * How the JSONL backend (`jsonl.ts`, whose top documents the file) reads a file's lines: a chunk
 * at a time, each line no longer than a line may be ({@link MAX_LINE_BYTES}), a longer one found
 * by its newline in bounded pieces and never held.
 *
 * @module
 */
import { LedgerIoError } from '../lib/errors.js';
import type { Fd, FileIO } from '../lib/file-io.js';
import { MAX_LINE_BYTES } from '../lib/log.js';

/** The size of the chunks a file is read in, unless a log is told another. */
export const DEFAULT_CHUNK = 8 << 20;
/**
 * Every this many records, the log remembers where a record starts, so that `read(from, to)`
 * seeks near `from` and stops near `to`: a point read costs one stride of lines at most, and
 * the starts of 10M records take 156k numbers.
 */
export const SEEK_STRIDE = 64;

/** The complete lines of one chunk of the file: `buffer[0]` is at `position`, each line ends at an `ends` index (its newline). */
export interface Chunk {
  readonly buffer: Buffer;
  readonly position: number;
  readonly ends: readonly number[];
}

/**
 * A line longer than {@link MAX_LINE_BYTES}, found by its newline and never held: where it
 * starts and how long it is, without its newline. No writer wrote it, and no reader reads it.
 */
export interface OverlongLine {
  readonly overlong: true;
  readonly start: number;
  readonly length: number;
}

export const isOverlong = <T extends object>(piece: T | OverlongLine): piece is OverlongLine => 'overlong' in piece;

/** Reads up to `length` bytes at `at` into `into[offset...]`; the count read. */
export function readAt(
  io: FileIO,
  fd: Fd,
  name: string,
  into: Buffer,
  offset: number,
  length: number,
  at: number,
): number {
  try {
    return io.read(fd, into, offset, length, at);
  } catch (e) {
    throw new LedgerIoError(name, e, 'read');
  }
}

/** Whole lines of the file in a buffer: `buffer[0, length)` is at `position`, and ends with a newline. */
export interface LineRun {
  readonly buffer: Buffer;
  readonly position: number;
  readonly length: number;
}

/**
 * Where the runs of {@link lineRuns} are read into: after a run is handed over, the buffer the
 * next is read into (the unfinished line at its end is copied to that one's start), at least
 * `least` bytes long.
 */
export type NextBuffer = (done: Buffer, least: number) => Buffer;

/** The same buffer, for as long as it is long enough: a run is valid until the next is asked for. */
const reuse: NextBuffer = (done, least) => (least <= done.length ? done : Buffer.allocUnsafe(least));

/**
 * Buffers twice as long each time up to `limit`, then the same one: for a read that may want
 * only its first few lines (a record looked up by position) and may go on to the end.
 */
export const growingTo =
  (limit: number): NextBuffer =>
  (done, least) =>
    done.length >= Math.max(limit, least)
      ? done
      : Buffer.allocUnsafe(Math.max(least, Math.min(2 * done.length, limit)));

/**
 * The whole lines of the file's bytes `[from, to)`, a run at a time, each in the buffer
 * `nextBuffer` gives (at most one line of the longest a line may be, so that no line is held
 * whole past {@link MAX_LINE_BYTES}: a longer one is scanned for its end in bounded pieces and
 * given as an {@link OverlongLine}, after which nothing more is read). A file that ends before
 * `to`, or whose bytes up to `to` end without a newline, stops the lines there when `to` is only
 * what `fstat` said (an open: the rest is a tail, however long), and is an error when the log
 * held those lines (`held`): someone cut or changed the file while the log was open, and reading
 * on would find nothing.
 */
export function* lineRuns(
  io: FileIO,
  fd: Fd,
  name: string,
  from: number,
  to: number,
  chunkSize: number,
  held: boolean,
  nextBuffer: NextBuffer = reuse,
): Generator<LineRun | OverlongLine> {
  let buffer = nextBuffer(Buffer.alloc(0), Math.max(1, Math.min(chunkSize, to - from)));
  let carried = 0; // bytes of an unfinished line kept at the start of `buffer`
  let position = from; // the file offset of buffer[0]
  while (position + carried < to) {
    if (carried > MAX_LINE_BYTES) {
      // longer than a line may be, and not yet at its end: the log held no such line
      if (held) throw changedWhileOpen(name, sizeOf(io, fd, name), to);
      const end = newlineAfter(io, fd, name, position + carried, to, chunkSize);
      if (end !== null) yield { overlong: true, start: position, length: end - position };
      return; // without a newline, a tail
    }
    if (carried === buffer.length) {
      const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_LINE_BYTES + 1));
      buffer.copy(larger, 0, 0, carried);
      buffer = larger;
    }
    const got = readAt(
      io,
      fd,
      name,
      buffer,
      carried,
      Math.min(buffer.length - carried, to - position - carried),
      position + carried,
    );
    if (got === 0) {
      if (held) throw changedWhileOpen(name, sizeOf(io, fd, name), to);
      return; // the file is shorter than fstat said: stop at what was read, the rest is a tail
    }
    const filled = carried + got;
    const length = buffer.lastIndexOf(10, filled - 1) + 1;
    if (length > 0) yield { buffer, position, length };
    const next = length === 0 ? buffer : nextBuffer(buffer, buffer.length);
    buffer.copy(next, 0, length, filled);
    buffer = next;
    carried = filled - length;
    position += length;
  }
  if (held && carried > 0) throw changedWhileOpen(name, sizeOf(io, fd, name), to);
}

/**
 * The complete lines of the file's bytes `[from, to)`, a chunk at a time, as {@link lineRuns}
 * reads them (the first line of a chunk starts at `buffer[0]`, each next one after the previous
 * newline), with every line's end. The buffer is reused: a chunk is valid until the next is
 * asked for.
 */
export function lineChunks(
  io: FileIO,
  fd: Fd,
  name: string,
  from: number,
  to: number,
  chunkSize: number,
  held: true,
  nextBuffer?: NextBuffer,
): Generator<Chunk>;
export function lineChunks(
  io: FileIO,
  fd: Fd,
  name: string,
  from: number,
  to: number,
  chunkSize: number,
): Generator<Chunk | OverlongLine>;
export function* lineChunks(
  io: FileIO,
  fd: Fd,
  name: string,
  from: number,
  to: number,
  chunkSize: number,
  held = false,
  nextBuffer: NextBuffer = reuse,
): Generator<Chunk | OverlongLine> {
  for (const run of lineRuns(io, fd, name, from, to, chunkSize, held, nextBuffer)) {
    if (isOverlong(run)) {
      yield run;
      /* c8 ignore next -- every reader stops at a line longer than a line may be, so none resumes past it (and lineRuns gives nothing after one) */
      continue;
    }
    const { buffer, position, length } = run;
    const ends: number[] = [];
    for (
      let newline = buffer.indexOf(10);
      newline !== -1 && newline < length;
      newline = buffer.indexOf(10, newline + 1)
    )
      ends.push(newline);
    yield { buffer, position, ends };
  }
}

/** Where the first newline at or after `at` (and before `to`) is, looked for a piece at a time; `null` when there is none. */
export function newlineAfter(
  io: FileIO,
  fd: Fd,
  name: string,
  at: number,
  to: number,
  chunkSize: number,
): number | null {
  const piece = Buffer.allocUnsafe(Math.max(1, Math.min(chunkSize, DEFAULT_CHUNK)));
  while (at < to) {
    const got = readAt(io, fd, name, piece, 0, Math.min(piece.length, to - at), at);
    if (got === 0) return null; // shorter than fstat said
    const newline = piece.subarray(0, got).indexOf(10);
    if (newline !== -1) return at + newline;
    at += got;
  }
  return null;
}

/** Why an {@link OverlongLine} of `length` bytes is damage. */
export const overlongWhy = (length: number): string =>
  `the line is ${length} bytes long, more than the ${MAX_LINE_BYTES} bytes (64 MiB) a ledger's line may hold; no ledgerstore writes such a line, and none reads one`;

/**
 * The file no longer holds, up to byte `held`, the whole lines an open log counted: it was cut
 * or changed under the log (by hand, or by a writer cutting back lines whose sync failed). A
 * reopen reads what the file holds now.
 */
export function changedWhileOpen(name: string, size: number, held: number): LedgerIoError {
  return new LedgerIoError(
    name,
    new Error(
      `the file changed while open: it no longer holds the ${held} bytes of whole lines this log read (it is ${size} bytes long now); reopen the ledger`,
    ),
    'read',
  );
}

/** Where the records of the file's first `to` bytes that fall on a `SEEK_STRIDE` boundary start, found by their newlines alone. */
export function recordStarts(io: FileIO, fd: Fd, name: string, to: number, chunkSize: number): number[] {
  const starts: number[] = [];
  let n = 0;
  for (const { position, ends } of lineChunks(io, fd, name, 0, to, chunkSize, true)) {
    let start = 0;
    for (const end of ends) {
      if (n % SEEK_STRIDE === 0) starts.push(position + start);
      n++;
      start = end + 1;
    }
  }
  return starts;
}

/** The file's size (`fstat`). */
export function sizeOf(io: FileIO, fd: Fd, file: string): number {
  try {
    return io.size(fd);
  } catch (e) {
    throw new LedgerIoError(file, e, 'read');
  }
}
