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
import { tryLock } from 'fs-native-extensions';

/** A file descriptor, or whatever number a test layer hands out instead. */
export type Fd = number;

/** The file-system calls of the JSONL backend. */
export interface FileIO {
  /** Opens an existing file to read. Throws `ENOENT` when it is missing. */
  openRead(path: string): Fd;
  /** Opens an existing file to read and write (no `O_APPEND`: writes give their position). */
  openReadWrite(path: string): Fd;
  /** Creates a new file, to read and write, with `mode`; `EEXIST` when it exists. */
  create(path: string, mode: number): Fd;
  /** The file's size in bytes. */
  size(fd: Fd): number;
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

/** The real file system, through `node:fs` and an open file description lock. */
export const nodeFileIO: FileIO = {
  openRead: (path) => fs.openSync(path, fs.constants.O_RDONLY),
  openReadWrite: (path) => fs.openSync(path, fs.constants.O_RDWR),
  create: (path, mode) => fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, mode),
  size: (fd) => fs.fstatSync(fd).size,
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
  tryLock: (fd) => tryLock(fd),
};
