/**
 * A LevelDB log's folder prepared before LevelDB opens it: looked at from its files
 * (`lib/leveldb/folder.ts`), refused when it is not a log's or is damaged, created, adopted, or
 * copied aside for a reader; and, after the read-through, held to what its last writer closed it
 * with. `index.ts` documents what a folder promises.
 *
 * @module
 */

import { makeFolder, writeMarker } from '../../lib/database-folder.js';
import { ForeignFolderError, LevelFolderDamagedError, OldFormatError } from '../../lib/errors.js';
import { fingerprintOf } from '../../lib/fingerprint.js';
import { peekDatabase, snapshotFolder } from '../../lib/folder-snapshot.js';
import { levelFailure } from '../../lib/level-failure.js';
import { inspectFolder, type LiveFiles, largestKey, verifyTables } from '../../lib/leveldb/folder.js';
import type { Marker } from '../../lib/leveldb/marker.js';
import type { Position } from '../../lib/log.js';
import { type LevelDatabase, VIEW } from './database.js';
import { checkMarker, FOLDER_MARKER, FORMAT, META_KEY, VERSION } from './format.js';
import { positionOf, RECORD_PREFIX, recordKey } from './keys.js';

/** What a folder's marker file says of the log when a writer last closed it, if it says. */
export interface ClosedAt {
  readonly head: Position;
  readonly fingerprint: string;
}

export function closedAtOf(marker: Marker | null): ClosedAt | null {
  const head = marker?.['head'];
  const fingerprint = marker?.['fingerprint'];
  return typeof head === 'number' && typeof fingerprint === 'string' ? { head, fingerprint } : null;
}

/** What an open of a folder does, once the folder was looked at. */
export type Prepared =
  | { readonly open: 'nothing' }
  | {
      readonly open: 'create' | 'existing';
      readonly location: string;
      readonly closedAt: ClosedAt | null;
    };

/**
 * Looks at the folder, refusing it when it is not a log's or is damaged, and prepares it:
 * nothing to open (a reader of a missing or empty folder), a database to create (the folder and
 * its marker made), or one to open, in the folder or (for a reader) in a copy of it.
 */
export async function prepareFolder(folder: string, name: string, readOnly: boolean): Promise<Prepared> {
  const found = inspectFolder(folder, FORMAT);
  if (found.state === 'foreign') throw new ForeignFolderError(folder, found.why);
  if (found.state === 'damaged') throw new LevelFolderDamagedError(folder, found.file, found.why);
  const closedAt = found.state === 'missing' ? null : closedAtOf(found.marker);
  if (found.state !== 'database') {
    if (closedAt !== null && closedAt.head > 0) {
      throw new LevelFolderDamagedError(
        folder,
        null,
        `the log held ${closedAt.head} records when a writer last closed it, and the folder holds no database now`,
      );
    }
    if (readOnly) return { open: 'nothing' };
    makeFolder(folder);
    if (found.state === 'missing' || found.marker === null) writeMarker(folder, FOLDER_MARKER);
    return { open: 'create', location: folder, closedAt: null };
  }
  verifyTables(folder, found.live);
  if (closedAt !== null) {
    // Records lost at the end (a write-ahead log cut or emptied, its last batch changed) are
    // seen from the files, before LevelDB's open drops what does not read for good.
    const largest = largestKey(found.live, RECORD_PREFIX);
    // (a key that names no position is damage the read through reports where it is)
    const last = largest === 'unknown' || largest === null ? null : positionOf(largest);
    if (largest === null || last !== null) checkClosedHead(folder, last === null ? 0 : last + 1, closedAt);
  }
  if (found.marker === null) {
    const version = await unmarkedVersion(folder, name, found.live);
    if (version !== null && version !== VERSION && !readOnly) throw new OldFormatError(folder, version, VERSION);
    if (!readOnly) writeMarker(folder, FOLDER_MARKER); // adopted: empty, or a log of this version
  }
  const location = readOnly ? snapshotFolder(folder, found.live) : folder;
  if (!readOnly) makeFolder(folder); // syncs its parent, which the folder's creator may have died before doing
  return { open: 'existing', location, closedAt };
}

/**
 * The format version of a database in a folder without a marker file (one ledgerstore 0.1
 * wrote, or a caller's own classic-level database), looked at in a copy: the version its log's
 * marker says, `null` for a database that holds nothing.
 * @throws {@link ForeignFolderError} when it holds keys and no log's marker (not a ledger)
 * @throws `DamagedError` when the log's marker is not one this version reads
 */
async function unmarkedVersion(folder: string, name: string, live: LiveFiles): Promise<number | null> {
  return peekDatabase(
    folder,
    live,
    (e) => levelFailure(name, e, 'level'),
    async (db) => {
      const meta = await db.get(META_KEY);
      if (meta !== undefined) return checkMarker(name, meta);
      if ((await db.keys({ limit: 1 }).all()).length > 0) {
        throw new ForeignFolderError(
          folder,
          "it holds a LevelDB database whose keys are not a ledger's (a read model of ledgerstore 0.1, or another program's database)",
        );
      }
      return null;
    },
  );
}

/** Damage unless a log of `head` records holds every record its last writer closed it with. */
function checkClosedHead(folder: string, head: Position, closedAt: ClosedAt): void {
  if (head < closedAt.head) {
    throw new LevelFolderDamagedError(
      folder,
      null,
      `acknowledged records are missing: the log held ${closedAt.head} records when a writer last closed it, and it holds ${head}`,
    );
  }
}

/** Damage unless the log holds, at the head its last writer closed it at, the record it held. */
export async function checkClosedAt(
  db: LevelDatabase,
  folder: string,
  head: Position,
  closedAt: ClosedAt,
): Promise<void> {
  if (closedAt.head === 0) return;
  checkClosedHead(folder, head, closedAt);
  let value: Uint8Array | undefined;
  try {
    value = await db.get<Uint8Array, Uint8Array>(recordKey(closedAt.head - 1), VIEW);
  } catch (e) {
    throw levelFailure(folder, e, 'level');
  }
  if (value === undefined || fingerprintOf(value) !== closedAt.fingerprint) {
    throw new LevelFolderDamagedError(
      folder,
      null,
      `record ${closedAt.head} is not the one the log held when a writer last closed it: the records were changed or replaced`,
    );
  }
}
