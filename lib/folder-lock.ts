/**
 * Who may look into, or open, a LevelDB folder: this process's own reservations (so that no open
 * here takes LevelDB's lock away from another), and a lock on the folder's `LOCK` that conflicts
 * with LevelDB's, held while the folder is looked at.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nativeExtensions } from './dependencies.js';
import { LedgerIoError, LockedError, type LockHolder } from './errors.js';

/**
 * The folders a LevelDB database of this process is open in (or being opened in), by resolved
 * path. Another open in this process must not so much as open their `LOCK`: the kernel drops
 * every `fcntl` lock a process holds on a file when the process closes any descriptor of it, so
 * a look at the lock would take LevelDB's away.
 */
const inUse = new Set<string>();

/**
 * Reserves `folder` for a LevelDB database this process opens in it, until the returned
 * function is called (at its close, or when the open fails).
 * @throws {@link LockedError} when this process has a database open there already
 */
export function reserveFolder(folder: string, holder: LockHolder): () => void {
  const key = path.resolve(folder);
  if (inUse.has(key)) throw new LockedError(folder, { holder });
  inUse.add(key);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    inUse.delete(key);
  };
}

/** @throws {@link LockedError} when this process has a LevelDB database open in `folder` */
export function assertNotInUse(folder: string, holder: LockHolder): void {
  if (inUse.has(path.resolve(folder))) throw new LockedError(folder, { holder });
}

/**
 * Runs `body` holding a lock on the folder's `LOCK` that conflicts with LevelDB's (an open file
 * description lock: the kernel makes it conflict with LevelDB's `fcntl` lock, in this process
 * too), so that no LevelDB changes the folder while `body` looks at it: shared for a reader,
 * exclusive otherwise. Creates nothing: without a `LOCK` (or a folder), no LevelDB holds it, and
 * `body` runs unlocked. (An open that finds the folder unlocked and then loses the race to
 * LevelDB's lock is refused by LevelDB's own.) The caller has made sure that no database of this
 * process is open in the folder ({@link reserveFolder}, {@link assertNotInUse}).
 * @throws {@link LockedError} when a LevelDB holds the folder
 */
export async function withFolderLocked<T>(
  folder: string,
  holder: LockHolder,
  shared: boolean,
  body: () => Promise<T> | T,
): Promise<T> {
  const file = path.join(folder, 'LOCK');
  let fd: number;
  try {
    fd = fs.openSync(file, shared ? fs.constants.O_RDONLY : fs.constants.O_RDWR);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return body(); // the folder's own look says what is wrong
    throw new LedgerIoError(file, e);
  }
  try {
    let locked: boolean;
    try {
      locked = nativeExtensions().tryLock(fd, 0, 0, { shared });
    } catch (e) {
      throw new LedgerIoError(file, e);
    }
    if (!locked) throw new LockedError(folder, { holder });
    return await body();
  } finally {
    fs.closeSync(fd);
  }
}
