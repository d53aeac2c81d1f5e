/**
 * The JSONL backend's calls on its file (`jsonl.ts`, whose top documents the file and the
 * path): the open of a regular file and nothing else, the lock, syncs, a torn tail's cut, and
 * the lines of an append as one buffer, each call's failure a ledger error naming the file.
 *
 * @module
 */
import * as path from 'node:path';
import {
  DamagedError,
  FileReplacedError,
  InvalidRecordError,
  LedgerIoError,
  LockedError,
  NOT_A_LEDGER_SAMPLE,
  NotAFileError,
  NotALedgerError,
} from '../lib/errors.js';
import { type Fd, type FileIO, type FileStatus, KIND_WORDS } from '../lib/file-io.js';
import { type CheckedRecord, lineTooLong, MAX_LINE_BYTES, type RecordCodec } from '../lib/log.js';
import { readAt, sizeOf } from './jsonl-lines.js';

/** The most a batch's buffer keeps between appends; a larger batch has a buffer of its own. */
const KEPT_BATCH_BYTES = 1024 * 1024;
/** The most UTF-16 units of lines joined into one string to be written at once: far below what a string can hold. */
const JOINED_UNITS = 1 << 20;

/**
 * The lines of each append, each with its newline, as one buffer for one write, the lines
 * written into it a run at a time, with no second pass to measure them and no new buffer per
 * append (the one of the last batch is reused). No line may be longer than a line may hold: a
 * reader would refuse it as damage. (The Honcho codec refuses such a record before it is queued;
 * this is for codecs that do not.)
 */
export class BatchLines {
  private scratch: Buffer = Buffer.alloc(0);

  /**
   * The records' lines, valid until the next call (copy what is kept longer).
   * @throws {@link InvalidRecordError} when one is longer than a line may hold, and nothing is written
   */
  write<R>(records: readonly CheckedRecord<R>[]): Buffer {
    // UTF-8 takes at most 3 bytes for each UTF-16 unit (a surrogate pair: 4 for 2), so the
    // buffer is sized from the strings' lengths, which costs nothing to read
    let most = 0;
    for (const record of records) most += 3 * record.line.length + 1;
    // past the kept buffer, measured exactly, each line checked before anything is allocated: a
    // large batch takes its own bytes, not three times them
    if (most > KEPT_BATCH_BYTES) most = measured(records);
    const bytes = this.room(most);
    // The lines are joined and written a run at a time, not one by one: a line made of a
    // template's parts is flattened when written, and one flattening of many lines costs less
    // than one a line (64 lines: 0.45 against 0.64 us a line, the encode included).
    let at = 0;
    let run = '';
    for (const record of records) {
      const line = record.line;
      if (run.length + line.length >= JOINED_UNITS) {
        at += bytes.write(run, at, 'utf8');
        run = '';
      }
      run += `${line}\n`;
    }
    at += bytes.write(run, at, 'utf8');
    return bytes.subarray(0, at);
  }

  /** A buffer of at least `bytes`: the kept one, grown when short; one of its exact size past {@link KEPT_BATCH_BYTES}. */
  private room(bytes: number): Buffer {
    if (bytes <= this.scratch.length) return this.scratch;
    if (bytes > KEPT_BATCH_BYTES) return Buffer.allocUnsafe(bytes);
    this.scratch = Buffer.allocUnsafe(Math.min(KEPT_BATCH_BYTES, Math.max(bytes, 2 * this.scratch.length)));
    return this.scratch;
  }
}

/**
 * The bytes of the records' lines with their newlines, exactly.
 * @throws {@link InvalidRecordError} at the first line longer than a line may hold
 */
function measured<R>(records: readonly CheckedRecord<R>[]): number {
  let bytes = 0;
  for (const record of records) {
    const line = record.line;
    const length = Buffer.byteLength(line);
    if (length > MAX_LINE_BYTES) throw new InvalidRecordError(lineTooLong(length));
    bytes += length + 1;
  }
  return bytes;
}

/** An open regular file: its descriptor, and which file it is (`fstat`'s device and inode). */
export interface OpenFile {
  readonly fd: Fd;
  readonly identity: string;
}

export const isMissing = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Opens the file at `file` if there is one: `null` when nothing is there (an empty log). Only a
 * regular file is a ledger. Anything else is refused before it is opened, since opening it may
 * wait (a FIFO waits for a writer) or act (a tape rewinds), and again from the descriptor, in
 * case it was put at the path in between (the open itself never waits). A symbolic link is
 * followed: the ledger is the file it leads to.
 * @throws {@link NotAFileError} when something else is at the path
 */
export function openRegular(io: FileIO, file: string, readOnly: boolean): OpenFile | null {
  let found: FileStatus;
  try {
    found = io.statusOf(file);
  } catch (e) {
    if (isMissing(e)) return null;
    throw new LedgerIoError(file, e, 'read');
  }
  if (found.kind !== 'file') throw new NotAFileError(file, KIND_WORDS[found.kind]);
  let fd: Fd;
  try {
    fd = readOnly ? io.openRead(file) : io.openReadWrite(file);
  } catch (e) {
    if (isMissing(e)) return null; // removed since the look
    throw new LedgerIoError(file, e, readOnly ? 'read' : 'write');
  }
  try {
    const opened = statusOfOpen(io, fd, file);
    if (opened.kind !== 'file') throw new NotAFileError(file, KIND_WORDS[opened.kind]);
    return { fd, identity: opened.identity };
  } catch (e) {
    closeQuietly(io, fd);
    throw e;
  }
}

/** What the open file is (`fstat`). */
export function statusOfOpen(io: FileIO, fd: Fd, file: string): FileStatus {
  try {
    return io.status(fd);
  } catch (e) {
    throw new LedgerIoError(file, e, 'read');
  }
}

/** The path of the file `file` leads to, through any symbolic links. */
export function realPath(io: FileIO, file: string): string {
  try {
    return io.realPath(file);
  } catch (e) {
    throw new LedgerIoError(file, e);
  }
}

/**
 * Takes the writer's lock on the open file.
 * @throws {@link LockedError} when another writer holds it
 * @throws {@link LedgerIoError} when the lock itself fails (`ENOLCK` on some network file systems)
 */
export function lock(io: FileIO, fd: Fd, file: string): void {
  let granted: boolean;
  try {
    granted = io.tryLock(fd);
  } catch (e) {
    throw new LedgerIoError(file, e);
  }
  if (!granted) throw new LockedError(file);
}

/** Syncs the directory that holds the file at `absolute`. */
export function syncDirectory(io: FileIO, absolute: string): void {
  const directory = path.dirname(absolute);
  try {
    io.syncDirectory(directory);
  } catch (e) {
    throw new LedgerIoError(directory, e);
  }
}

/**
 * The file holds no whole line, only `size` bytes with no newline: a line a crash cut off only if
 * a writer could have left it, beginning as a line the codec writes does (a NUL standing for a
 * byte a power loss left unwritten, a sector that never reached the disk). Anything else (a
 * settings file named for the ledger, say) is not a log's, and is refused, not cut.
 * @throws {@link DamagedError} at line 1 when it could not be a cut-off line
 */
export function refuseUnlessCutOff(
  io: FileIO,
  fd: Fd,
  file: string,
  size: number,
  starts: readonly Buffer[] | undefined,
): void {
  if (starts === undefined || starts.length === 0) return;
  const first = Buffer.alloc(Math.min(size, Math.max(...starts.map((start) => start.length))));
  const head = first.subarray(0, readAt(io, fd, file, first, 0, first.length, 0));
  if (beginsAsALine(head, starts)) return;
  throw new DamagedError(
    file,
    1,
    `${size} bytes with no newline, which do not begin as a record's line does: not a line cut off by a crash`,
  );
}

/** Whether `head`, a file's first bytes, begin as one of the lines that start with `starts` may: a NUL counts for any byte (one a power loss left unwritten). */
function beginsAsALine(head: Buffer, starts: readonly Buffer[]): boolean {
  return starts.some((start) => head.every((byte, at) => byte === 0 || at >= start.length || byte === start[at]));
}

/**
 * What to say of damage at line 1 of the file (`damage`, which an open has just thrown, its
 * descriptor closed): a {@link NotALedgerError} when the file is no ledger at all, else `damage`
 * as it is. No ledger: it does not begin as a record's line does (with the codec's `lineStarts`;
 * zeros, which a power loss leaves, count for any byte), and no whole line of its first
 * {@link NOT_A_LEDGER_SAMPLE} bytes decodes as a record. Only a failed open pays for the look.
 */
export function notALedgerOr<R>(io: FileIO, file: string, codec: RecordCodec<R>, damage: DamagedError): DamagedError {
  if (damage.line !== 1 || damage instanceof NotALedgerError) return damage;
  let opened: OpenFile | null;
  try {
    opened = openRegular(io, file, true);
  } catch {
    return damage; // gone or changed since: the damage is what the open found
  }
  if (opened === null) return damage;
  let sample: Buffer;
  try {
    const bytes = Buffer.alloc(NOT_A_LEDGER_SAMPLE);
    sample = bytes.subarray(0, readAt(io, opened.fd, file, bytes, 0, bytes.length, 0));
  } catch {
    return damage;
  } finally {
    closeQuietly(io, opened.fd);
  }
  const starts = codec.lineStarts?.map((start) => Buffer.from(start, 'utf8'));
  const newline = sample.indexOf(10);
  const firstLine = sample.subarray(0, newline === -1 ? sample.length : newline);
  if (starts !== undefined && starts.length > 0 && beginsAsALine(firstLine, starts)) return damage;
  for (let start = 0, end = newline; end !== -1; start = end + 1, end = sample.indexOf(10, start)) {
    try {
      codec.decode(sample, start, end + 1);
      return damage; // a record among the first lines: a ledger, damaged
    } catch {
      // not a record: look at the next line
    }
  }
  return new NotALedgerError(file, damage.why, { cause: damage });
}

/** Cuts a torn tail and syncs, so that the next append follows the last whole line. */
export function cut(io: FileIO, fd: Fd, file: string, length: number): void {
  try {
    io.truncate(fd, length);
    io.datasync(fd);
  } catch (e) {
    throw new LedgerIoError(file, e);
  }
}

export function closeQuietly(io: FileIO, fd: Fd): void {
  try {
    io.close(fd);
  } catch {
    // the descriptor is gone either way
  }
}

/**
 * Creates the file, locked, on a writer's first append; or, when it appeared since the writer
 * found it missing, adopts it if it is unlocked and still empty (made by hand, or by a writer
 * that wrote nothing), and refuses it otherwise: another writer made it. The caller syncs the
 * directory.
 */
export function createOrAdopt(io: FileIO, file: string, mode: number): OpenFile {
  let fd: Fd;
  try {
    fd = io.create(file, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return adoptCreatedElsewhere(io, file);
    throw new LedgerIoError(file, e);
  }
  try {
    lock(io, fd, file);
    return { fd, identity: statusOfOpen(io, fd, file).identity };
  } catch (e) {
    closeQuietly(io, fd); // the empty file stays: the next writer adopts it
    throw e;
  }
}

function adoptCreatedElsewhere(io: FileIO, file: string): OpenFile {
  const opened = openRegular(io, file, false);
  if (opened === null) {
    // the name exists (the create said so) but leads to no file: a symbolic link to nothing
    throw new LedgerIoError(
      file,
      new Error(
        'the path is taken, but by no file to open (a symbolic link to a missing file?); remove it, or create the file it leads to',
      ),
    );
  }
  try {
    lock(io, opened.fd, file);
    if (sizeOf(io, opened.fd, file) !== 0) throw new LockedError(file);
  } catch (e) {
    closeQuietly(io, opened.fd);
    throw e;
  }
  return opened;
}

/**
 * Why the path `absolute` no longer leads to the file `identity` the `holder` has open (another
 * file is there, none is, or that cannot be told), or `null` when it still does.
 */
export function notAtPath(
  io: FileIO,
  name: string,
  absolute: string,
  identity: string,
  holder: 'writer' | 'reader',
): FileReplacedError | LedgerIoError | null {
  let at: string;
  try {
    at = io.statusOf(absolute).identity;
  } catch (e) {
    return isMissing(e) ? new FileReplacedError(name, 'removed', holder) : new LedgerIoError(name, e, 'read');
  }
  return at === identity ? null : new FileReplacedError(name, 'replaced', holder);
}
