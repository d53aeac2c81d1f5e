/**
 * The JSONL file backend: memoryd's `<home>/memory/honcho.jsonl`, and any log of records that a
 * {@link RecordCodec} writes as one line of text.
 *
 * ## The file
 *
 * UTF-8 text, one record a line, each line the codec's canonical text followed by `\n`. Nothing
 * else: no header, no checksum, no padding, so that memoryd (Rust, serde_json) and ledgerstore
 * read and write the same bytes. Line N (counted from 1) is the record at position N - 1.
 *
 * ## The path
 *
 * A ledger is a regular file, or nothing yet (a missing file is an empty log, created by the
 * first append). Anything else at the path (a directory, a FIFO, a socket, a block or character
 * device) is refused with a {@link NotAFileError} before it is opened (opening a FIFO waits for
 * a writer, a device may act on an open), and again from the descriptor, in case something was
 * put there in between; the open itself never waits (`O_NONBLOCK`). A symbolic link is followed:
 * the ledger is the regular file it leads to, locked and synced as that file (the directory
 * synced is the one that holds it). A link to nothing reads as an empty log, and the first
 * append refuses to create a file through it.
 *
 * ## Writing
 *
 * - An append writes all its lines with one `write` at the end of the file (more only if the
 *   system writes short), then `fdatasync`, and resolves only after that. A crash can so leave
 *   the last line cut off, never a line in the middle.
 * - The file is created by the first append, mode 0600, and its directory is then fsync'd, so
 *   that the file's name survives a crash as well as its data; a writable open of a file that
 *   exists syncs its directory too (its creator may have died before it did). The directory is
 *   never created.
 * - A failed `write` is cut back (`ftruncate` to the last good length, then `fdatasync`, so that
 *   a power loss cannot bring back lines of the failed append) and the log stays usable.
 *   When that cut fails, or when `fdatasync` failed (its data may or may not be on disk, and
 *   Linux forgets the error once reported, so a retry would lie), the log refuses every later
 *   append until it is reopened: reopening reads the file again and trusts only what is whole.
 * - One writer: a writable open takes an open-file-description lock on the file, which the
 *   kernel releases when the file is closed or the process dies (no lock file to clean up), and
 *   a second writable open in the same process is refused before it touches the file. A missing
 *   file cannot be locked: two processes may open it, and the second to create it is refused.
 * - The lock holds a file, not its name: an edit that puts another file at the path (`sed -i`,
 *   an editor, `mv`) or removes it goes unhindered, and a writer running through it would go on
 *   appending to a file no reader opens, beside a second writer let in on the new one. So after
 *   each append's sync, and before it is acknowledged, the writer looks at the path (`stat`,
 *   against the device and inode of the file it holds): when another file or none is there, the
 *   append is cut back and refused with a `FileReplacedError`, and so is every later one
 *   until the ledger is reopened. A `stat` costs a few microseconds against the sync's hundreds.
 *
 * ## Reading through
 *
 * `open` reads the file as bytes, in chunks. Every complete line is decoded and handed to
 * `replay`, in order. Whatever follows the last `\n` (a line a crash cut off, or the zeros a
 * power loss can leave) is dropped: after every complete line was accepted, a writable open
 * cuts it from the file and syncs, and `repaired` says so. Any complete line that does not
 * decode, or that `replay` refuses, stops the open with a {@link DamagedError} giving its line
 * number, and the file is left exactly as it was.
 *
 * A line may hold at most `MAX_LINE_BYTES` (64 MiB, its newline not counted): an append
 * with a longer one is refused and writes nothing, and a longer line in the file is damage at
 * its line, found by scanning for its newline in bounded pieces without holding it (a line of
 * gigabytes costs an open no more memory than the longest line it may hold, and none is longer
 * than a JavaScript string can be). A tail may be of any length: it is scanned alike.
 *
 * A tail is cut only where a writer could have left it: after a complete line, or, in a file
 * with no complete line, when it begins as a line the codec writes begins (its `lineStarts`; a
 * NUL counts for any byte, one a power loss left unwritten). Other bytes with no newline (a
 * settings file named for the ledger) are no log's: damage at line 1, left as they are.

 * Damage at line 1 of a file that is no ledger at all (a README, a binary: it does not begin as
 * a record's line does, and no line of its first 64 KiB is a record) is told as a
 * `NotALedgerError`, a `DamagedError` with a code and a runbook entry of its own: the fix is
 * another path, not a repair. A ledger with records among its first lines stays damaged.
 *
 * ## Resuming
 *
 * An open can start at a point a read model kept: see `jsonl-resume.ts`.
 *
 * @module
 */
import * as path from 'node:path';
import { DamagedError, type LedgerError, LedgerIoError, ResumeMismatchError, StoppedError } from '../lib/errors.js';
import { type Fd, type FileIO, nodeFileIO } from '../lib/file-io.js';
import type { ScannedLines } from '../lib/line-scan.js';
import type {
  CheckedRecord,
  HeadWatcher,
  LogBackend,
  LogCapabilities,
  OpenOptions,
  Position,
  RecordCodec,
  ResumePoint,
  Unwatch,
} from '../lib/log.js';
import { StoredLog } from '../lib/log-base.js';
import {
  BatchLines,
  closeQuietly,
  createOrAdopt,
  cut,
  lock,
  notALedgerOr,
  notAtPath,
  openRegular,
  realPath,
  refuseUnlessCutOff,
  syncDirectory,
} from './jsonl-file.js';
import { DEFAULT_HEARTBEAT_MS, sizeStillThere, watchFile, wholeLines } from './jsonl-follow.js';
import {
  type Chunk,
  changedWhileOpen,
  DEFAULT_CHUNK,
  isOverlong,
  lineChunks,
  overlongWhy,
  readAt,
  recordStarts,
  sizeOf,
} from './jsonl-lines.js';
import { LineMarks } from './jsonl-marks.js';
import { readRecords } from './jsonl-read.js';
import { type Cursor, resumeCursor } from './jsonl-resume.js';
import { type ScanOptions, scannedRuns } from './jsonl-scan.js';

/** How to open a JSONL log. */
export interface JsonlOptions<R> {
  /** How records become lines. */
  readonly codec: RecordCodec<R>;
  /** The file-system layer (tests put a fault-injecting one here). */
  readonly io?: FileIO;
  /** The size of the chunks the file is read in. */
  readonly chunkSize?: number;
  /** How long a watch waits between two looks at the file besides what the system tells (default 1,000 ms). */
  readonly heartbeatMs?: number;
  /**
   * How the read-through at open spreads its work over threads, with a codec that can scan lines
   * (`RecordCodec.lineScan`): see `jsonl-scan.ts`.
   */
  readonly scan?: ScanOptions;
}

const CAPABILITIES: LogCapabilities = {
  durable: true,
  files: true,
  severalWriters: false,
  readsWhileWriting: true,
  atomicBatches: false,
  watches: true,
};
const FILE_MODE = 0o600;

/** A JSONL log at `file`. */
export function jsonlBackend<R>(file: string, options: JsonlOptions<R>): LogBackend<R> {
  return {
    name: file,
    capabilities: CAPABILITIES,
    open: (openOptions) => JsonlLog.open(file, options, openOptions ?? {}),
  };
}

class JsonlLog<R> extends StoredLog<R> {
  private readonly codec: RecordCodec<R>;
  private readonly batchLines = new BatchLines();
  private readonly io: FileIO;
  private readonly chunkSize: number;
  private readonly scanOptions: ScanOptions;
  private readonly absolute: string;
  private fd: Fd | null = null;
  /** Which file `fd` is (its device and inode), for a writer to tell whether it is still the one at the path. */
  private identity: string | null = null;
  /** The file's size when it was opened: what the read-through reads. */
  private size = 0;
  /** Where the lines are: the end of the whole ones (where the next append goes), the last one's start, every `SEEK_STRIDE`th record's. */
  private readonly marks = new LineMarks();
  /** The last line this log appended, without its newline, as its record's checked line (`null` until it appends). */
  private lastLine: string | null = null;
  private readonly heartbeatMs: number;
  /** The open's {@link OpenOptions.sizeHint}, told the bytes the read-through reads once its first run is taken. */
  private sizeHint: OpenOptions<R>['sizeHint'];

  private constructor(file: string, options: JsonlOptions<R>, readOnly: boolean) {
    const absolute = path.resolve(file);
    super({ name: file, capabilities: CAPABILITIES, codec: options.codec, readOnly, writerKey: absolute });
    this.codec = options.codec;
    this.io = options.io ?? nodeFileIO;
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.scanOptions = options.scan ?? {};
    this.absolute = absolute;
  }

  static async open<R>(file: string, options: JsonlOptions<R>, openOptions: OpenOptions<R>): Promise<JsonlLog<R>> {
    const log = new JsonlLog(file, options, openOptions.readOnly ?? false);
    log.sizeHint = openOptions.sizeHint;
    try {
      return await log.start(openOptions);
    } catch (e) {
      // damage at line 1 may be a file that is no ledger at all: a README, a binary
      throw e instanceof DamagedError ? notALedgerOr(log.io, file, options.codec, e) : e;
    }
  }

  protected override _open(): void {
    const { io, name: file } = this;
    const opened = openRegular(io, file, this.readOnly);
    if (opened === null) return;
    this.fd = opened.fd;
    this.identity = opened.identity;
    if (!this.readOnly) {
      lock(io, opened.fd, file);
      // A writer that created the file may have died before it synced the directory: sync it
      // now, before anything appended here is acknowledged, or a power loss could take the
      // file's name, and every record in it, away. Through a symbolic link, that is the
      // directory of the file the link leads to.
      syncDirectory(io, realPath(io, file));
    }
    this.size = sizeOf(io, opened.fd, file);
  }

  protected _storedBefore(resume: ResumePoint): Buffer {
    if (this.fd === null) throw new ResumeMismatchError(this.name, resume.position, 'the log holds no records');
    const { cursor, line } = resumeCursor(this.io, this.fd, this.name, this.size, this.chunkSize, resume);
    this.marks.resumedAt(cursor);
    return line;
  }

  /**
   * The complete lines from where the open starts, a chunk at a time, each line decoded when it
   * is reached (after the lines before it were replayed); then the tail after the last newline,
   * cut (by a writer) once every line before it was taken.
   */
  protected *_entries(from: Position): Generator<Iterable<R> | ScannedLines<R>> {
    const { io, fd, name: file, codec, marks } = this;
    if (fd === null) return;
    const read = { count: from };
    let hint = this.sizeHint;
    const startsAt = marks.length;
    const firstTaken = (): void => {
      if (hint === undefined) return;
      const told = hint;
      hint = undefined;
      told(this.size - startsAt, { bytes: marks.length - startsAt, records: read.count - from });
    };
    if (codec.lineScan === undefined) {
      for (const piece of lineChunks(io, fd, file, marks.length, this.size, this.chunkSize)) {
        if (isOverlong(piece)) throw new DamagedError(file, read.count + 1, overlongWhy(piece.length));
        yield this.decoded(piece, read);
        firstTaken();
      }
    } else {
      const runs = scannedRuns(io, fd, file, marks.length, this.size, this.chunkSize, codec.lineScan, this.scanOptions);
      for (const piece of runs) {
        if (isOverlong(piece)) throw new DamagedError(file, read.count + 1, overlongWhy(piece.length));
        yield piece.lines;
        // every line of the run was taken (a refused one ends the read-through before this)
        const ends = piece.lines.lineEnds();
        marks.run(read.count, piece.position, ends);
        read.count += ends.length;
        firstTaken();
      }
    }
    if (marks.length < this.size) {
      if (marks.length === 0)
        refuseUnlessCutOff(
          io,
          fd,
          file,
          this.size,
          this.codec.lineStarts?.map((start) => Buffer.from(start, 'utf8')),
        );
      if (!this.readOnly) cut(io, fd, file, marks.length);
      this.repair = { at: marks.length, dropped: this.size - marks.length, cut: !this.readOnly };
    }
  }

  /** The records of a chunk read through at open, the first at `read.count`, noting where they start and end. */
  private *decoded({ buffer, position, ends }: Chunk, read: { count: Position }): Generator<R> {
    let start = 0;
    for (const end of ends) {
      // with its newline, as memoryd hands the line to serde: errors at the end read alike
      yield this.codec.decode(buffer, start, end + 1);
      this.marks.line(read.count++, position + start, position + end + 1);
      start = end + 1;
    }
  }

  /** The whole append, synchronously: one write of every line, one `fdatasync`, a look at the path. */
  protected _append(
    records: readonly R[],
    _head: undefined,
    _keys: undefined,
    checked: readonly CheckedRecord<R>[],
  ): void {
    const bytes = this.batchLines.write(checked);
    const fd = this.fd ?? this.createFile();
    try {
      for (let done = 0; done < bytes.length; )
        done += this.io.write(fd, bytes, done, bytes.length - done, this.marks.length + done);
    } catch (e) {
      this.fail(fd, new LedgerIoError(this.name, e), false);
    }
    try {
      this.io.datasync(fd);
    } catch (e) {
      // The lines may or may not be on disk, and Linux may have dropped the dirty pages and
      // the error with them: a retry could report success for data that is gone. Stop.
      this.fail(fd, new LedgerIoError(this.name, e), true);
    }
    // the lock holds the file, not its name: the path must still lead to it ("Writing", above)
    const moved = notAtPath(this.io, this.name, this.absolute, this.identity as string, 'writer');
    if (moved !== null) this.fail(fd, moved, true);
    this.marks.appended(bytes, this.count, records.length);
    // its text, which it was written from, not a copy of its bytes: the batch's buffer is the
    // next batch's too, and a fingerprint of the text is that of its UTF-8
    this.lastLine = (checked[checked.length - 1] as CheckedRecord<R>).line;
  }

  /**
   * An append failed (a write, a sync, or the file is not at its path any more): cut the file
   * back to its last good length, so that no reader takes the failed lines for records, and stop
   * the log if that cut fails or `always`. Throws `failure`.
   *
   * The cut is synced before the append is rejected: a write that failed after earlier writes
   * of the batch landed whole lines, and a power loss before the next sync could otherwise
   * bring them back, records of an append the caller was told failed. A cut that cannot be
   * synced is a cut that failed.
   */
  private fail(fd: Fd, failure: LedgerError, always: boolean): never {
    let cutBack = true;
    try {
      this.io.truncate(fd, this.marks.length);
      this.io.datasync(fd);
    } catch {
      cutBack = false;
    }
    if (always || !cutBack) this.stop(failure);
    throw failure;
  }

  /** Creates the file on the first append (or adopts one made since, unlocked and empty), its directory synced. */
  private createFile(): Fd {
    const { fd, identity } = createOrAdopt(this.io, this.name, FILE_MODE);
    this.fd = fd;
    this.identity = identity;
    // Without its directory synced the file's name, and all appended to it, may not survive a
    // crash (and whoever made it may not have synced it): stop rather than acknowledge appends.
    try {
      syncDirectory(this.io, realPath(this.io, this.absolute));
    } catch (e) {
      this.stop(e as LedgerIoError);
      throw e;
    }
    return fd;
  }

  /**
   * A reader's catch-up: the whole lines a writer in another process appended since, synced
   * first (see `jsonl-follow.ts`). A writer is the only writer: what it holds is the log.
   */
  protected override _storedHead(): Position {
    if (!this.readOnly) return this.count;
    this.assertRunning(); // a reader whose sync failed takes in no more lines
    const { io, name } = this;
    if (this.fd === null) {
      const opened = openRegular(io, name, true);
      if (opened === null) return this.count;
      this.fd = opened.fd;
      this.identity = opened.identity;
    }
    const fd = this.fd;
    const { marks } = this;
    const read = { length: marks.length, count: this.count };
    const size = sizeStillThere(io, fd, name, this.absolute, this.identity as string, read);
    if (size === marks.length) return this.count;
    try {
      io.datasync(fd);
    } catch (e) {
      // never tried again: a second sync may report success for bytes the first lost
      const stopped = new StoppedError(name, new LedgerIoError(name, e, 'read'), 'reader');
      this.stop(stopped);
      throw stopped;
    }
    let count = marks.takeCounted(this.count, size);
    wholeLines(io, fd, name, { length: marks.length, count }, size, this.chunkSize, (start, next) => {
      marks.line(count++, start, next);
    });
    return count;
  }

  /** Tells of the whole lines that appear in the file (see `jsonl-follow.ts`): another process's appends, and this log's. */
  watch(watcher: HeadWatcher): Promise<Unwatch> {
    return this.watching(watcher, async (told) =>
      watchFile(
        {
          io: this.io,
          name: this.name,
          absolute: this.absolute,
          chunkSize: this.chunkSize,
          heartbeatMs: this.heartbeatMs,
          from: { length: this.marks.length, count: this.count },
          identity: this.identity,
          // a reader's lines counted ahead of its catch-up, in the file it reads
          onLine: (identity, position, start, next) => {
            if (this.readOnly && identity === this.identity) this.marks.counted(this.count, position, start, next);
          },
        },
        told,
      ),
    );
  }

  /** The records from `from` up to `to` (or the head now): see `jsonl-read.ts`. */
  protected *_read(from: Position, to: Position | undefined): Generator<R[]> {
    const fd = this.fd;
    if (fd === null || from >= this.count) return;
    // After a resumed open the starts of the records before it are not known yet: find them,
    // by their newlines alone, once.
    const { marks } = this;
    marks.starts ??= recordStarts(this.io, fd, this.name, marks.length, this.chunkSize);
    yield* readRecords(this.io, fd, this.name, this.codec, this.chunkSize, marks.starts, marks.length, from, to);
  }

  protected override _cursor(): Cursor {
    return { position: this.count, offset: this.marks.length, lastLineStart: this.marks.lastLineStart };
  }

  /** The last line, without its newline: at hand when this log wrote it (a read model asks after every append), else read back. */
  protected _storedLast(): Buffer | string {
    if (this.lastLine !== null) return this.lastLine;
    const fd = this.fd as Fd; // a log with records has its file
    const { length, lastLineStart } = this.marks;
    const line = Buffer.allocUnsafe(length - 1 - lastLineStart);
    const got = readAt(this.io, fd, this.name, line, 0, line.length, lastLineStart);
    if (got !== line.length) throw changedWhileOpen(this.name, sizeOf(this.io, fd, this.name), length);
    return line;
  }

  protected _close(): void {
    if (this.fd !== null) closeQuietly(this.io, this.fd);
    this.fd = null;
  }
}
