/**
 * Following a JSONL file that a writer in another process appends to (memoryd's daemon, with
 * its CLI or a ledgerstore follower beside it): the whole lines that appear past those a log
 * has read, and a watch that tells of them as they appear.
 *
 * - **Only whole lines.** What follows the last newline is a line being written (or one a
 *   crash cut off, which the writer's next open cuts): it is neither counted nor read until its
 *   newline is there. A line longer than a line may be is damage at its line.
 * - **Durable before believed.** A writer's line is in the file (and visible) from its `write`,
 *   before its `fdatasync` has returned; the reader syncs the file itself before it takes new
 *   lines in (`fdatasync` on a read-only descriptor: it flushes whoever's data is dirty). A sync
 *   that fails is never retried into success: Linux reports a failed writeback once, so the
 *   reader takes in nothing more until it is reopened.
 * - **A file that went back or was replaced.** A file shorter than the whole lines read (cut
 *   short, or put back from a backup) is a log that went back ({@link LogWentBackError}); a
 *   file that is no longer the one at the path (replaced, removed) is a {@link FileReplacedError}.
 *   Either ends a watch (`onFailure`) and fails the reader's next refresh.
 * - **The watch** is `fs.watch` (inotify on Linux) on the file, or on its folder while there is
 *   no file yet, with a look at the file's size every `heartbeatMs` behind it, so that a change
 *   the system did not tell of (a network file system) costs at most that. Each look reads only
 *   the bytes past the last it read, and counts their newlines: its log takes that count at
 *   its next refresh rather than make it again. Like a listening socket, a watch keeps the
 *   process alive until it is stopped.
 *
 * @module
 */
import { type FSWatcher, watch } from 'node:fs';
import * as path from 'node:path';
import {
  DamagedError,
  FileReplacedError,
  isLedgerError,
  type LedgerError,
  LedgerIoError,
  LogWentBackError,
} from '../lib/errors.js';
import type { Fd, FileIO } from '../lib/file-io.js';
import type { HeadWatcher, Position, Unwatch } from '../lib/log.js';
import { closeQuietly, notAtPath, openRegular } from './jsonl-file.js';
import { isOverlong, lineChunks, overlongWhy, sizeOf } from './jsonl-lines.js';

/** How long a watch waits between two looks at the file besides what the system tells, unless told. */
export const DEFAULT_HEARTBEAT_MS = 1000;

/** Where the whole lines read end: the byte after the last newline, and how many lines that is. */
export interface LinesEnd {
  readonly length: number;
  readonly count: Position;
}

/**
 * Calls `line(start, next)` for each whole line in the bytes `[from, to)` of the file (`start`:
 * where it starts; `next`: after its newline), in order, the first being record `count`.
 * @throws {@link DamagedError} at a line longer than a line may be
 */
export function wholeLines(
  io: FileIO,
  fd: Fd,
  name: string,
  { length: from, count }: LinesEnd,
  to: number,
  chunkSize: number,
  line: (start: number, next: number) => void,
): void {
  let n = count;
  for (const piece of lineChunks(io, fd, name, from, to, chunkSize)) {
    if (isOverlong(piece)) throw new DamagedError(name, n + 1, overlongWhy(piece.length));
    let start = 0;
    for (const end of piece.ends) {
      line(piece.position + start, piece.position + end + 1);
      n++;
      start = end + 1;
    }
  }
}

/**
 * The file at `absolute` must still be the one `fd` is (`identity`), and hold at least `length`
 * bytes; gives its size.
 * @throws {@link FileReplacedError} when another file or none is at the path
 * @throws {@link LogWentBackError} when it is shorter than the whole lines read
 */
export function sizeStillThere(
  io: FileIO,
  fd: Fd,
  name: string,
  absolute: string,
  identity: string,
  read: LinesEnd,
): number {
  const moved = notAtPath(io, name, absolute, identity, 'reader');
  if (moved !== null) throw moved;
  const size = sizeOf(io, fd, name);
  if (size < read.length) {
    throw new LogWentBackError(
      name,
      read.count,
      `the file is ${size} bytes long, shorter than the ${read.length} bytes of whole lines read`,
    );
  }
  return size;
}

/** What a watch of a JSONL file needs. */
export interface FileWatch {
  readonly io: FileIO;
  /** The log's name, for messages: its path as given. */
  readonly name: string;
  /** The path, absolute. */
  readonly absolute: string;
  readonly chunkSize: number;
  readonly heartbeatMs: number;
  /** Where the lines the log has read end: the watch counts from there. */
  readonly from: LinesEnd;
  /** Which file the log read them from (its device and inode); `null` when it found none. */
  readonly identity: string | null;
  /**
   * Each whole line counted (record `position`, its bytes `[start, next)` of the file `identity`),
   * before its head is told: the log may take the count rather than make it again.
   */
  readonly onLine?: (identity: string, position: Position, start: number, next: number) => void;
}

/**
 * Watches the file: `watcher.onHead` with the number of whole lines when it starts and each
 * time more appear; `onFailure` once, when the file went back or is no longer at the path (or
 * cannot be read), after which the watch has ended.
 */
export function watchFile(options: FileWatch, watcher: HeadWatcher): Unwatch {
  const follower = new Follower(options, watcher);
  follower.start();
  return async () => follower.stop();
}

class Follower {
  private fd: Fd | null = null;
  private identity = '';
  private read: LinesEnd;
  private reported = -1;
  private stopped = false;
  private system: FSWatcher | null = null;
  private watching: 'file' | 'folder' | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: FileWatch,
    private readonly watcher: HeadWatcher,
  ) {
    this.read = options.from;
  }

  start(): void {
    this.heartbeat = setInterval(() => this.look(), this.options.heartbeatMs);
    this.look();
    if (!this.stopped && this.watching === null) this.watchSystem('folder');
  }

  /** What the system tells of: the file (its writes, its rename) or, while it is missing, its folder. */
  private watchSystem(what: 'file' | 'folder'): void {
    this.system?.close();
    this.watching = what;
    const { absolute } = this.options;
    try {
      this.system = watch(what === 'file' ? absolute : path.dirname(absolute), () => this.look());
      // a watch the system drops (the folder removed): the heartbeat goes on looking
      this.system.on('error', () => {
        this.system?.close();
        this.system = null;
      });
    } catch {
      this.system = null; // the heartbeat alone
    }
  }

  /** One look: the file opened once it is there, then the whole lines past those counted. */
  private look(): void {
    if (this.stopped) return;
    const { io, name, absolute, chunkSize } = this.options;
    try {
      if (this.fd === null) {
        const opened = openRegular(io, absolute, true);
        const expected = this.options.identity;
        if (opened === null) {
          if (expected !== null) throw new FileReplacedError(name, 'removed', 'reader');
          this.report(this.read.count);
          return;
        }
        this.fd = opened.fd;
        if (expected !== null && opened.identity !== expected) throw new FileReplacedError(name, 'replaced', 'reader');
        this.identity = opened.identity;
        this.watchSystem('file');
      }
      const fd = this.fd;
      const size = sizeStillThere(io, fd, name, absolute, this.identity, this.read);
      let { length, count } = this.read;
      const { onLine } = this.options;
      wholeLines(io, fd, name, this.read, size, chunkSize, (start, next) => {
        onLine?.(this.identity, count, start, next);
        length = next;
        count++;
      });
      this.read = { length, count };
      this.report(count);
    } catch (e) {
      this.fail(isLedgerError(e) ? e : new LedgerIoError(name, e, 'read'));
    }
  }

  private report(head: Position): void {
    if (head <= this.reported) return;
    this.reported = head;
    this.watcher.onHead(head);
  }

  private fail(failure: LedgerError): void {
    this.stop();
    this.watcher.onFailure?.(failure);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.system?.close();
    this.system = null;
    if (this.fd !== null) closeQuietly(this.options.io, this.fd);
    this.fd = null;
  }
}
