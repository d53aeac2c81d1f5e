/**
 * The read model's folder: looked at before LevelDB opens it (`lib/level-folder.ts`, the LevelDB
 * backend's code for its folders too), refused when it holds anything else, a damaged database
 * discarded (the folder marked first), a folder of ledgerstore 0.1 adopted; and its database
 * opened.
 *
 * @module
 */
import { ClassicLevel } from 'classic-level';
import { ForeignFolderError, LedgerIoError, LevelFolderDamagedError } from '../../errors.js';
import {
  discardDatabase,
  inspectFolder,
  levelFailure,
  makeFolder,
  peekDatabase,
  type TableStamp,
  verifyTables,
  writeMarker,
} from '../../level-folder.js';
import { type Bytes, type Db, MODEL_MARKER, SCHEMA, utf8 } from './layout.js';

/**
 * Makes the folder ready for LevelDB: looks at it, refuses it when it is not a read model's,
 * discards a damaged one (first marking the folder, so that a crash in the middle is known for
 * one), adopts a folder of ledgerstore 0.1. Gives why it discarded a database, if it did, and
 * whether LevelDB is to create one. The caller holds the folder's lock.
 */
export async function prepareModelFolder(
  folder: string,
): Promise<{ readonly discarded: string | null; readonly create: boolean }> {
  const found = inspectFolder(folder, MODEL_MARKER.format);
  if (found.state === 'foreign') throw new ForeignFolderError(folder, found.why);
  if (found.state === 'missing') makeFolder(folder);
  if (found.state === 'missing' || found.state === 'empty') {
    if (found.state === 'missing' || found.marker === null || found.marker['discard'] !== undefined)
      writeMarker(folder, MODEL_MARKER);
    return { discarded: null, create: true };
  }
  // Without the marker, the folder cannot be told for a read model's: left as it is.
  if (found.marker === null && found.state === 'damaged')
    throw new LevelFolderDamagedError(folder, found.file, found.why);
  let why: string | null = found.state === 'damaged' ? found.why : null;
  if (found.state === 'database' && found.marker === null) {
    const holds = await peekDatabase(
      folder,
      found.live,
      (e) => new LedgerIoError(folder, e),
      async (db) => {
        if ((await db.get(Uint8Array.of(0x00, ...Buffer.from('format', 'ascii')))) !== undefined) return 'a log';
        if ((await db.keys({ limit: 1 }).all()).length === 0) return 'nothing';
        const meta = await db.getMany(['!meta!totals', '!meta!checkpoint'].map(utf8));
        return meta.some((value) => value !== undefined) ? 'an old read model' : 'other keys';
      },
    );
    if (holds === 'a log')
      throw new ForeignFolderError(
        folder,
        'it holds a LevelDB ledger (a log) of ledgerstore 0.1, not a read model (an index)',
      );
    if (holds === 'other keys')
      throw new ForeignFolderError(
        folder,
        "it holds a LevelDB database whose keys are not a read model's (another program's database)",
      );
    if (holds === 'an old read model')
      why = `it is of schema version 1 (ledgerstore 0.1), and this ledgerstore reads version ${SCHEMA}`;
    writeMarker(folder, MODEL_MARKER); // adopted
  }
  if (found.state === 'database' && why === null) {
    const verified = (found.marker?.['tables'] ?? {}) as { readonly [number: string]: TableStamp };
    try {
      const stamps = verifyTables(folder, found.live, verified);
      if (JSON.stringify(stamps) !== JSON.stringify(verified)) writeMarker(folder, { ...MODEL_MARKER, tables: stamps });
    } catch (e) {
      if (!(e instanceof LevelFolderDamagedError)) throw e;
      why = e.why;
    }
  }
  if (why === null) return { discarded: null, create: false };
  discard(folder, why);
  return { discarded: why, create: true };
}

/** Throws the database away, the folder marked first (synced) with why, so that a crash in the middle is finished by the next open. The caller holds the folder's lock. */
export function discard(folder: string, why: string): void {
  writeMarker(folder, { ...MODEL_MARKER, discard: why });
  discardDatabase(folder);
}

/** Opens (or, when `create`, creates) the read model's database in its folder. */
export async function openStore(folder: string, create: boolean): Promise<Db> {
  const db: Db = new ClassicLevel<Bytes, Bytes>(folder, { keyEncoding: 'view', valueEncoding: 'view' });
  try {
    await db.open({ createIfMissing: create });
  } catch (e) {
    throw levelFailure(folder, e, 'index');
  }
  return db;
}
