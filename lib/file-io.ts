/**
 * The file-system calls the JSONL backend makes, behind one small interface, so that tests can
 * put a layer under it that fails the Nth call, or keeps unsynced writes in a buffer and decides
 * what a power loss leaves of them.
 *
 * The calls are synchronous: an append is one `write` and one `fdatasync`, and through the thread
 * pool each would cost a round trip; `make bench` measures the bare loop both ways
 * (docs/benchmarks.md: about 7.4k syncs/s synchronously against 4.4k/s through `fs.promises`).
 * Errors are Node.js system errors (`code`, `errno`), as `node:fs` throws them.
 *
 * @module
 */
import * as fs from 'node:fs';
import { nativeExtensions } from './dependencies.js';

/** A file descriptor, or whatever number a test layer hands out instead. */
export type Fd = number;

/** What a path names, or an open file is, as `stat` tells it. */
export type FileKind = 'file' | 'directory' | 'fifo' | 'socket' | 'block device' | 'character device' | 'other';

/** What `stat` says of a file that the backend needs: its kind, and which file it is. */
export interface FileStatus {
  readonly kind: FileKind;
  /**
   * The file's device and inode (`st_dev:st_ino`): the same for every name of the file and
   * across renames, different for a file put in its place.
   */
  readonly identity: string;
}

/** Each kind, in the words of a message: `a named pipe (FIFO)`. */
export const KIND_WORDS: { readonly [kind in FileKind]: string } = {
  file: 'a regular file',
  directory: 'a directory',
  fifo: 'a named pipe (FIFO)',
  socket: 'a socket',
  'block device': 'a block device',
  'character device': 'a character device',
  other: 'neither a file nor a directory',
};

/** The file-system calls of the JSONL backend. */
export interface FileIO {
  /**
   * Opens an existing file to read. Throws `ENOENT` when it is missing. Never waits: whatever is
   * at the path (a FIFO with no writer, a device) opens at once or fails.
   */
  openRead(path: string): Fd;
  /**
   * Opens an existing file to read and write (no `O_APPEND`: writes give their position). Never
   * waits, as {@link openRead}.
   */
  openReadWrite(path: string): Fd;
  /** Creates a new file, to read and write, with `mode`; `EEXIST` when it exists. */
  create(path: string, mode: number): Fd;
  /** The file's size in bytes. */
  size(fd: Fd): number;
  /** `fstat`: what the open file is. */
  status(fd: Fd): FileStatus;
  /** `stat`, through symbolic links: what `path` names now. Throws `ENOENT` when nothing. */
  statusOf(path: string): FileStatus;
  /** The path with every symbolic link resolved (`realpath`). Throws `ENOENT` when nothing is there. */
  realPath(path: string): string;
  /** Reads up to `length` bytes at `position` into `buffer[offset...]`; the count read. */
  read(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** Writes `buffer[offset, offset + length)` at `position`; the count written (maybe short). */
  write(fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** `fdatasync`: the file's data, and the size that reading it needs, on stable storage. */
  datasync(fd: Fd): void;
  /** `ftruncate`. */
  truncate(fd: Fd, length: number): void;
  close(fd: Fd): void;
  /** `fsync` of a directory, so that a file created in it survives a crash. */
  syncDirectory(path: string): void;
  /**
   * Takes an exclusive lock on the open file, released by the kernel when the file is closed or
   * the process dies; `false` when another open file holds it.
   */
  tryLock(fd: Fd): boolean;
}

/**
 * `O_NONBLOCK` makes an open of a FIFO return at once instead of waiting for a writer (and
 * regular files ignore it); `O_NOCTTY` keeps a terminal at the path from becoming this process's
 * controlling terminal. Neither changes anything for the regular files the backend keeps.
 */
const NEVER_WAIT = fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

function kindOf(stats: fs.BigIntStats): FileKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isCharacterDevice()) return 'character device';
  /* c8 ignore next -- stat follows symbolic links, and Linux has no other kind of file */
  return 'other';
}

/** The status of `stats`, taken with `bigint: true`: inode numbers may exceed 2^53. */
const statusFrom = (stats: fs.BigIntStats): FileStatus => ({
  kind: kindOf(stats),
  identity: `${stats.dev}:${stats.ino}`,
});

/** The real file system, through `node:fs` and an open file description lock. */
export const nodeFileIO: FileIO = {
  openRead: (path) => fs.openSync(path, fs.constants.O_RDONLY | NEVER_WAIT),
  openReadWrite: (path) => fs.openSync(path, fs.constants.O_RDWR | NEVER_WAIT),
  create: (path, mode) => fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, mode),
  size: (fd) => fs.fstatSync(fd).size,
  status: (fd) => statusFrom(fs.fstatSync(fd, { bigint: true })),
  statusOf: (path) => statusFrom(fs.statSync(path, { bigint: true })),
  realPath: (path) => fs.realpathSync.native(path),
  read: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  write: (fd, buffer, offset, length, position) => fs.writeSync(fd, buffer, offset, length, position),
  datasync: (fd) => fs.fdatasyncSync(fd),
  truncate: (fd, length) => fs.ftruncateSync(fd, length),
  close: (fd) => fs.closeSync(fd),
  syncDirectory: (path) => {
    const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
  tryLock: (fd) => nativeExtensions().tryLock(fd),
};
