/**
 * A new ledger built beside its final name and given that name in one step, so that it appears
 * whole or not at all (`ledgerstore gen` and `copy`): a file or a folder named
 * `<final>.tmp-<pid>`, by the process that builds it, then linked or renamed into place.
 *
 * What may be at the final name: nothing, an empty file (for a file: it is replaced, keeping its
 * mode, under the JSONL writer's lock, so that no writer appends to it meanwhile) or an empty
 * folder (for a folder: `rename` replaces an empty folder). Anything else is refused, before the
 * building starts and again when the name is given.
 *
 * A build that is killed (SIGKILL, a power loss) leaves its `<final>.tmp-<pid>`; the next build
 * to the same name removes those whose process is gone ({@link removeLeftovers}) and says so.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LedgerIoError, LockedError } from '../lib/errors.js';
import { type FileIO, nodeFileIO } from '../lib/file-io.js';
import { systemError } from '../lib/system-errors.js';

/**
 * The file-system calls made here: `node:fs`'s own, and the JSONL backend's folder sync and lock,
 * behind one value so that a test can fail one of them ({@link nodeAsideIO} is the real system).
 */
export type AsideIO = Pick<
  typeof fs,
  | 'readdirSync'
  | 'rmSync'
  | 'lstatSync'
  | 'linkSync'
  | 'unlinkSync'
  | 'renameSync'
  | 'openSync'
  | 'fstatSync'
  | 'chmodSync'
  | 'closeSync'
> &
  Pick<FileIO, 'syncDirectory' | 'tryLock'>;

/** The real file system. */
export const nodeAsideIO: AsideIO = {
  readdirSync: fs.readdirSync,
  rmSync: fs.rmSync,
  lstatSync: fs.lstatSync,
  linkSync: fs.linkSync,
  unlinkSync: fs.unlinkSync,
  renameSync: fs.renameSync,
  openSync: fs.openSync,
  fstatSync: fs.fstatSync,
  chmodSync: fs.chmodSync,
  closeSync: fs.closeSync,
  syncDirectory: nodeFileIO.syncDirectory,
  tryLock: nodeFileIO.tryLock,
};

/** The name a build in this process gives the file or folder it makes for `final`. */
export function asidePath(final: string): string {
  return `${final}.tmp-${process.pid}`;
}

/** Whether the process `pid` is running (one of another user's counts: it may be a build). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes what builds for `final` that did not finish left beside it: every `<final>.tmp-<pid>`
 * whose process is gone (a process that is running may be building it now).
 * @returns the paths removed, for the caller to say so
 * @throws {@link LedgerIoError} when the folder cannot be read or a leftover removed
 */
export function removeLeftovers(final: string, io: AsideIO = nodeAsideIO): string[] {
  const folder = path.dirname(final);
  const prefix = `${path.basename(final)}.tmp-`;
  let names: string[];
  try {
    names = io.readdirSync(folder);
  } catch (e) {
    // No folder, no leftovers: building there fails next, with its own words.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw new LedgerIoError(folder, e);
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = name.startsWith(prefix) ? name.slice(prefix.length) : '';
    if (!/^[1-9][0-9]*$/.test(pid) || running(Number(pid))) continue;
    const leftover = path.join(folder, name);
    try {
      io.rmSync(leftover, { recursive: true, force: true });
    } catch (e) {
      throw new LedgerIoError(leftover, e);
    }
    removed.push(leftover);
  }
  return removed;
}

/** What is at a final name that a build may take: nothing, or an empty file or folder. */
export type FreeName = 'missing' | 'empty';

/**
 * Whether a new file may be given the name `final`: nothing is there, or an empty file.
 * @throws {@link LedgerIoError} (EEXIST) when something else is there, or the look fails
 */
export function freeForFile(final: string, io: AsideIO = nodeAsideIO): FreeName {
  let stat: fs.Stats | undefined;
  try {
    stat = io.lstatSync(final, { throwIfNoEntry: false });
  } catch (e) {
    throw new LedgerIoError(final, e);
  }
  if (stat === undefined) return 'missing';
  if (stat.isFile() && stat.size === 0) return 'empty';
  throw new LedgerIoError(final, systemError('EEXIST', 'open', final));
}

/**
 * Whether a new folder may be given the name `final`: nothing is there, or an empty folder.
 * @throws {@link LedgerIoError} (ENOTEMPTY, ENOTDIR) when something else is there, or the look fails
 */
export function freeForFolder(final: string, io: AsideIO = nodeAsideIO): FreeName {
  let entries: string[];
  try {
    entries = io.readdirSync(final);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new LedgerIoError(final, e);
  }
  if (entries.length === 0) return 'empty';
  throw new LedgerIoError(final, systemError('ENOTEMPTY', 'rename', final));
}

function syncFolderOf(final: string, io: AsideIO): void {
  const folder = path.dirname(path.resolve(final));
  try {
    io.syncDirectory(folder);
  } catch (e) {
    throw new LedgerIoError(folder, e);
  }
}

/** The system calls that say a file system has no hard links. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Gives the finished file `temp` the name `final`, and syncs the folder so that the name survives
 * a crash. Nothing there: a hard link, which fails where a file appeared meanwhile (`rename`
 * would replace it); where the file system has no hard links, a rename after a last look. An
 * empty file there: replaced, under the writer's lock (a writer that holds it is refused), with
 * its mode.
 * @throws {@link LedgerIoError} (EEXIST) when `final` is there and not empty; `temp` is left for the caller
 * @throws {@link LockedError} when a writer holds the empty file at `final`
 */
export function publishFile(temp: string, final: string, io: AsideIO = nodeAsideIO): void {
  try {
    io.linkSync(temp, final);
  } catch (e) {
    // Node's system errors always have a code; `String` gives the type one without a branch.
    const code = String((e as NodeJS.ErrnoException).code);
    if (code === 'EEXIST' || (NO_HARD_LINKS.has(code) && freeForFile(final, io) === 'empty'))
      replaceEmptyFile(temp, final, io);
    else if (NO_HARD_LINKS.has(code)) rename(temp, final, io);
    else throw new LedgerIoError(final, e);
    syncFolderOf(final, io);
    return;
  }
  try {
    io.unlinkSync(temp);
  } catch (e) {
    throw new LedgerIoError(temp, e);
  }
  syncFolderOf(final, io);
}

function rename(from: string, to: string, io: AsideIO): void {
  try {
    io.renameSync(from, to);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A folder that is not empty (ENOTEMPTY, or EEXIST on some systems) is something to keep.
    throw new LedgerIoError(to, code === 'EEXIST' || code === 'ENOTEMPTY' ? systemError('ENOTEMPTY', 'rename', to) : e);
  }
}

function replaceEmptyFile(temp: string, final: string, io: AsideIO): void {
  let fd: number;
  try {
    fd = io.openSync(final, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new LedgerIoError(final, e);
  }
  try {
    if (!io.tryLock(fd)) throw new LockedError(final);
    const stat = io.fstatSync(fd);
    if (!stat.isFile() || stat.size !== 0) throw new LedgerIoError(final, systemError('EEXIST', 'open', final));
    try {
      io.chmodSync(temp, stat.mode & 0o7777);
    } catch (e) {
      throw new LedgerIoError(temp, e);
    }
    rename(temp, final, io);
  } finally {
    io.closeSync(fd);
  }
}

/**
 * Gives the finished folder `temp` the name `final` (`rename`, which replaces only an empty
 * folder), and syncs the folder it is in.
 * @throws {@link LedgerIoError} (ENOTEMPTY) when `final` is there and not empty; `temp` is left for the caller
 */
export function publishFolder(temp: string, final: string, io: AsideIO = nodeAsideIO): void {
  rename(temp, final, io);
  syncFolderOf(final, io);
}

/**
 * Removes a build's file or folder, if it is there.
 * @returns whether there was one to remove
 */
export function discard(temp: string, io: AsideIO = nodeAsideIO): boolean {
  try {
    const there = io.lstatSync(temp, { throwIfNoEntry: false }) !== undefined;
    io.rmSync(temp, { recursive: true, force: true });
    return there;
  } catch (e) {
    throw new LedgerIoError(temp, e);
  }
}
