/**
 * A copy of a LevelDB folder's live files made aside, in the system's temporary folder, for a
 * reader's LevelDB to open in the folder's place (LevelDB has no read-only open, and changes a
 * folder it opens), and a look inside a database through one.
 *
 * @module
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ClassicLevel } from 'classic-level';
import { classicLevel } from './dependencies.js';
import { LedgerIoError } from './errors.js';
import type { LiveFiles } from './leveldb/folder.js';

/** The folder holding this process's snapshots: `ledgerstore-snapshot-<pid>-XXXXXX` in the temporary folder. */
const SNAPSHOT_PREFIX = 'ledgerstore-snapshot-';

/** Removes the snapshots of processes that died before they removed them. */
function sweepSnapshots(): void {
  let names: string[];
  try {
    names = fs.readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^ledgerstore-snapshot-(\d+)-/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    fs.rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Copies the live files of the database in `folder` to a new folder in the temporary folder,
 * for LevelDB to open there in the folder's place: the tables hard-linked where the file system
 * allows (they never change once written), copied otherwise; `CURRENT`, the manifest and the
 * write-ahead logs copied. Nothing in the folder is written. The caller holds the folder's lock
 * ({@link withFolderLocked}), so that no writer changes it meanwhile, and removes the copy
 * ({@link removeSnapshot}).
 * @throws {@link LedgerIoError} when a file cannot be read or the copy cannot be written
 */
export function snapshotFolder(folder: string, live: LiveFiles): string {
  sweepSnapshots();
  let copy: string;
  try {
    copy = fs.mkdtempSync(path.join(tmpdir(), `${SNAPSHOT_PREFIX}${process.pid}-`));
  } catch (e) {
    throw new LedgerIoError(tmpdir(), e);
  }
  try {
    for (const name of ['CURRENT', live.manifest, ...live.logs.map((log) => log.name)]) copyInto(folder, copy, name);
    for (const { name } of live.tables.values()) {
      try {
        fs.linkSync(path.join(folder, name), path.join(copy, name));
      } catch {
        copyInto(folder, copy, name); // another file system (EXDEV), or links refused
      }
    }
  } catch (e) {
    removeSnapshot(copy);
    throw e;
  }
  return copy;
}

function copyInto(folder: string, copy: string, name: string): void {
  try {
    fs.copyFileSync(path.join(folder, name), path.join(copy, name));
  } catch (e) {
    throw new LedgerIoError(path.join(folder, name), e);
  }
}

/** Removes a snapshot made by {@link snapshotFolder}. */
export function removeSnapshot(copy: string): void {
  fs.rmSync(copy, { recursive: true, force: true });
}

/**
 * Runs `look` on the database of `folder`, opened in a copy of its live files
 * ({@link snapshotFolder}), which is removed after: a look inside that changes nothing. The
 * caller holds the folder's lock.
 * @param failure how a failure of LevelDB's is reported
 */
export async function peekDatabase<T>(
  folder: string,
  live: LiveFiles,
  failure: (e: unknown) => Error,
  look: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<T>,
): Promise<T> {
  const copy = snapshotFolder(folder, live);
  try {
    const db = new (classicLevel().ClassicLevel)<Uint8Array, Uint8Array>(copy, {
      keyEncoding: 'view',
      valueEncoding: 'view',
    });
    try {
      await db.open({ createIfMissing: false });
    } catch (e) {
      throw failure(e);
    }
    try {
      return await look(db);
    } finally {
      await db.close().catch(() => undefined);
    }
  } finally {
    removeSnapshot(copy);
  }
}
