/**
 * What ledgerstore writes in a LevelDB folder of its own, besides what LevelDB writes: the
 * folder itself (synced into its parent), its marker file (`leveldb/marker.ts` says what it
 * holds), and the discard of a database's files. Kept out of `lib/leveldb/`, which only reads.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LedgerIoError } from './errors.js';
import { nodeFileIO } from './file-io.js';
import { isLevelDbName } from './leveldb/folder.js';
import { MARKER, type Marker, markerText } from './leveldb/marker.js';

const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Writes the marker file: to a temporary file, synced, renamed over the marker, and the folder
 * synced, so that a crash leaves the old marker or the new one.
 * @throws {@link LedgerIoError} when it cannot be written
 */
export function writeMarker(folder: string, marker: Marker): void {
  const text = markerText(marker);
  const temporary = path.join(folder, `${MARKER}.tmp-${process.pid}`);
  try {
    const fd = fs.openSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, FILE_MODE);
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, path.join(folder, MARKER));
    nodeFileIO.syncDirectory(folder);
  } catch (e) {
    throw new LedgerIoError(path.join(folder, MARKER), e);
  }
}

/**
 * Creates `folder` if missing (its parent must exist), and syncs its parent, so that the
 * folder survives a crash as well as what is written in it.
 * @throws {@link LedgerIoError} when it cannot be made, or a file is in its place (ENOTDIR)
 */
export function makeFolder(folder: string): void {
  try {
    fs.mkdirSync(folder, { mode: FOLDER_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new LedgerIoError(folder, e);
    try {
      fs.opendirSync(folder).closeSync(); // refuses a file where the folder should be, with ENOTDIR
    } catch (notFolder) {
      throw new LedgerIoError(folder, notFolder);
    }
    // and sync the parent all the same: the folder's creator may have died before it did
  }
  const parent = path.dirname(path.resolve(folder));
  try {
    nodeFileIO.syncDirectory(parent);
  } catch (e) {
    throw new LedgerIoError(parent, e);
  }
}

/**
 * Deletes the database's files from `folder` (not the marker, nor `LOCK`): every file but
 * `CURRENT`, then `CURRENT`, so that a crash in between leaves a folder whose damage is seen
 * (a manifest or table missing), or one as empty as a creation that died; then LevelDB can
 * create a new database there. The caller marks the folder first, so that a crash is known for
 * a discard, and holds its lock ({@link withFolderLocked}).
 * @throws {@link LedgerIoError} when a file cannot be deleted
 */
export function discardDatabase(folder: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch (e) {
    throw new LedgerIoError(folder, e);
  }
  const doomed = names.filter((name) => isLevelDbName(name) && name !== 'LOCK' && name !== 'CURRENT');
  for (const name of [...doomed, ...(names.includes('CURRENT') ? ['CURRENT'] : [])]) {
    try {
      fs.rmSync(path.join(folder, name), { recursive: true, force: true });
    } catch (e) {
      throw new LedgerIoError(path.join(folder, name), e);
    }
  }
  try {
    nodeFileIO.syncDirectory(folder);
  } catch (e) {
    throw new LedgerIoError(folder, e);
  }
}
