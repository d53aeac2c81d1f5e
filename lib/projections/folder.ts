/**
 * A read model's folder (`layout.ts`): looked at before anything in it is written, refused when
 * it holds anything else, its lock taken for as long as it is open, its registry read from its
 * marker; a read model of an older layout (or of ledgerstore 0.1) adopted and thrown away, to be
 * built again; its databases (`db-<n>/`) prepared as `lib/leveldb/folder.ts` looks at any of
 * ledgerstore's LevelDB folders (damage seen from their files discarded, the folder marked
 * first), opened, and removed once nothing in them is used.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { discardDatabase, makeFolder, writeMarker } from '../database-folder.js';
import { classicLevel, nativeExtensions } from '../dependencies.js';
import { ForeignFolderError, LedgerIoError, LevelFolderDamagedError, LockedError } from '../errors.js';
import { reserveFolder, withFolderLocked } from '../folder-lock.js';
import { peekDatabase } from '../folder-snapshot.js';
import { levelFailure } from '../level-failure.js';
import { inspectFolder, isLevelDbName, type TableStamp, verifyTables } from '../leveldb/folder.js';
import { isMarkerTemporary, MARKER, type Marker, markerOf } from '../leveldb/marker.js';
import { type Bytes, Database, type Db, VIEW } from './database.js';
import type { ProjectionProgress } from './definition.js';
import { MODEL_MARKER, SCHEMA } from './layout.js';
import { EMPTY_REGISTRY, type Registry, registryFrom } from './registry.js';

const LOCK = 'LOCK';
const STATUS = 'STATUS';
const STATUS_TEMPORARY = /^STATUS\.tmp-\d+$/;
const DATABASE = /^db-\d+$/;

/** What the folder's marker says, the registry with it. */
const markerWith = (registry: Registry, discard?: string): Marker => ({
  ...MODEL_MARKER,
  registry,
  ...(discard === undefined ? {} : { discard }),
});

/** What the process that has the read model open says of it, for another process to read. */
export interface StatusFile {
  readonly pid: number;
  /** When it was written (ISO 8601). */
  readonly written: string;
  readonly log: string;
  /** Whether it still has it open (`false`: the last word of a process that closed it). */
  readonly open: boolean;
  readonly projections: readonly ProjectionProgress[];
}

/** How the folder's entries read: a read model of this layout, of an older one, or none at all. */
function layoutOf(folder: string, entries: readonly fs.Dirent[]): 'current' | 'legacy' | 'new' {
  const others: string[] = [];
  let current = false;
  let legacy = false;
  for (const entry of entries) {
    const name = entry.name;
    if (name === MARKER || isMarkerTemporary(name) || name === LOCK) continue;
    if ((name === STATUS || STATUS_TEMPORARY.test(name)) && entry.isFile()) current = true;
    else if (DATABASE.test(name) && entry.isDirectory()) current = true;
    else if (isLevelDbName(name) && entry.isFile()) legacy = true;
    else others.push(name);
  }
  if (others.length > 0 || (current && legacy)) {
    const listed = others.length > 0 ? others : entries.map((e) => e.name);
    throw new ForeignFolderError(
      folder,
      `it holds files that are not a LevelDB database's (${listed.slice(0, 3).join(', ')}${listed.length > 3 ? ', ...' : ''})`,
    );
  }
  return legacy ? 'legacy' : current ? 'current' : 'new';
}

/** The folder's entries, or `null` when there is no such folder. */
function entriesOf(folder: string): fs.Dirent[] | null {
  try {
    return fs.readdirSync(folder, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LedgerIoError(folder, e);
  }
}

/**
 * Takes the read model's lock (`LOCK`, made if missing): an open-file-description lock, which
 * the kernel releases when the process dies, and which conflicts with another open of this
 * process too, and with a LevelDB of an older ledgerstore that holds the folder.
 * @throws {@link LockedError} when another holds it
 */
function takeLock(folder: string): number {
  const file = path.join(folder, LOCK);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  } catch (e) {
    throw new LedgerIoError(file, e);
  }
  let locked: boolean;
  try {
    locked = nativeExtensions().tryLock(fd, 0, 0, { shared: false });
  } catch (e) {
    fs.closeSync(fd);
    throw new LedgerIoError(file, e);
  }
  if (!locked) {
    fs.closeSync(fd);
    throw new LockedError(folder, { holder: 'index' });
  }
  return fd;
}

/** Whether another process has the read model in `folder` open (holds its lock). Takes nothing. */
export function heldElsewhere(folder: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(path.join(folder, LOCK), fs.constants.O_RDONLY);
  } catch {
    return false;
  }
  try {
    return !nativeExtensions().tryLock(fd, 0, 0, { shared: true });
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Adopts a read model of an older layout (LevelDB's files in the folder itself): schema 2, or
 * ledgerstore 0.1's, without a marker. Its rows are thrown away (the folder marked first, so that
 * a crash in the middle is finished by the next open). Gives why, to be said once.
 * @throws {@link ForeignFolderError} when the database is not a read model's (a LevelDB ledger, another program's)
 * @throws {@link LevelFolderDamagedError} when it is damaged and not marked as a read model's
 */
async function adoptLegacy(folder: string): Promise<string | null> {
  const found = inspectFolder(folder, 'ledgerstore/read-model');
  if (found.state === 'foreign') throw new ForeignFolderError(folder, found.why);
  if (found.state === 'missing') return null;
  if (found.marker === null && found.state === 'damaged')
    throw new LevelFolderDamagedError(folder, found.file, found.why);
  let why: string | null = null;
  if (found.state === 'damaged') why = `${found.why}; it was discarded`;
  else if (found.state === 'database' && found.marker !== null)
    why = `it is of schema version ${String(found.marker['schema'])}, and this ledgerstore reads version ${SCHEMA}`;
  else if (found.state === 'database') {
    const holds = await peekDatabase(
      folder,
      found.live,
      (e) => new LedgerIoError(folder, e),
      async (db) => {
        if ((await db.get(Uint8Array.of(0x00, ...Buffer.from('format', 'ascii')))) !== undefined) return 'a log';
        if ((await db.keys({ limit: 1 }).all()).length === 0) return 'nothing';
        const meta = await db.getMany(['!meta!totals', '!meta!checkpoint'].map((k) => Buffer.from(k)));
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
  }
  writeMarker(folder, markerWith(EMPTY_REGISTRY, why ?? 'an older layout'));
  discardDatabase(folder);
  writeMarker(folder, markerWith(EMPTY_REGISTRY));
  return why;
}

/**
 * Makes a database folder ready for LevelDB: looks at it, discards a damaged one (its marker says
 * so first), checks its tables' blocks (those not checked since they were last written). Gives
 * why it discarded the database, if it did, and whether LevelDB is to create one.
 */
function prepareDatabase(folder: string): { readonly discarded: string | null; readonly create: boolean } {
  const found = inspectFolder(folder, 'ledgerstore/read-model');
  if (found.state === 'foreign') throw new ForeignFolderError(folder, found.why);
  if (found.state === 'missing') makeFolder(folder);
  if (found.state === 'missing' || found.state === 'empty') {
    if (found.state === 'missing' || found.marker === null || found.marker['discard'] !== undefined)
      writeMarker(folder, MODEL_MARKER);
    return { discarded: null, create: true };
  }
  let why: string | null = found.state === 'damaged' ? found.why : null;
  if (found.state === 'database' && found.marker === null) why = 'it has no marker file';
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

/** Throws a database away, its folder marked first (synced) with why. */
function discard(folder: string, why: string): void {
  writeMarker(folder, { ...MODEL_MARKER, discard: why });
  discardDatabase(folder);
}

/** Opens (or, when `create`, creates) a LevelDB database in `folder`. */
export async function openLevel(folder: string, create: boolean): Promise<Db> {
  const db: Db = new (classicLevel().ClassicLevel)<Bytes, Bytes>(folder, VIEW);
  try {
    await db.open({ createIfMissing: create });
  } catch (e) {
    throw levelFailure(folder, e, 'index');
  }
  return db;
}

/**
 * Creates a new, empty database folder for a build (in a worker thread, which opens it itself):
 * the folder, its marker, then LevelDB's files.
 */
export async function createDatabase(folder: string): Promise<Db> {
  makeFolder(folder);
  writeMarker(folder, MODEL_MARKER);
  return openLevel(folder, true);
}

/**
 * Once a build closed its database: checks its tables' blocks where it wrote them (off the thread
 * that serves), so that the open that takes the rows over need not.
 */
export function verifyWritten(folder: string): void {
  const found = inspectFolder(folder, 'ledgerstore/read-model');
  if (found.state !== 'database') return;
  const stamps = verifyTables(folder, found.live, {});
  writeMarker(folder, { ...MODEL_MARKER, tables: stamps });
}

/** A read model's folder, open: its lock held, its registry read. */
export class ModelFolder {
  private constructor(
    readonly folder: string,
    registry: Registry,
    private lockFd: number | null,
    private readonly release: () => void,
  ) {
    this.registry = registry;
  }

  registry: Registry;

  /**
   * Opens the read model's folder (made if missing), taking its lock. Gives why what it held was
   * thrown away, if it was (another layout, a marker that does not read, a discard cut short).
   * @throws {@link LockedError} when another process (or open) has it
   * @throws {@link ForeignFolderError} when it holds anything but a read model
   * @throws {@link LevelFolderDamagedError} when it is damaged and not marked as a read model's
   */
  static async open(folder: string): Promise<{ model: ModelFolder; discarded: string | null }> {
    const release = reserveFolder(folder, 'index');
    try {
      let entries = entriesOf(folder);
      if (entries === null) {
        makeFolder(folder);
        entries = [];
      }
      const layout = layoutOf(folder, entries);
      // an older layout's LOCK is LevelDB's: its adoption takes it (withFolderLocked), ours after
      const lock = layout === 'legacy' ? null : takeLock(folder);
      try {
        let discarded: string | null = null;
        let registry: Registry = EMPTY_REGISTRY;
        if (layout === 'legacy') {
          discarded = await withFolderLocked(folder, 'index', false, () => adoptLegacy(folder));
        } else {
          const marker = markerOf(folder);
          const found = typeof marker === 'string' || marker === null ? null : registryFrom(marker['registry']);
          if (typeof marker === 'string') discarded = `${marker}; it was discarded`;
          else if (marker !== null && marker['discard'] !== undefined)
            discarded = `${String(marker['discard'])}; it was discarded`;
          else if (marker !== null && marker['schema'] !== SCHEMA)
            discarded = `it is of schema version ${String(marker['schema'])}, and this ledgerstore reads version ${SCHEMA}`;
          else if (marker !== null && found === null) discarded = 'its registry does not read; it was discarded';
          if (discarded !== null) {
            // everything it had is thrown away: marked first, so that a crash is finished next time
            writeMarker(folder, markerWith(EMPTY_REGISTRY, discarded));
            for (const entry of entries) if (DATABASE.test(entry.name)) removeFolder(path.join(folder, entry.name));
          } else if (found !== null) {
            registry = found;
          }
          if (marker === null || discarded !== null) writeMarker(folder, markerWith(EMPTY_REGISTRY));
        }
        const model = new ModelFolder(folder, registry, lock ?? takeLock(folder), release);
        model.removeOrphans();
        return { model, discarded };
      } catch (e) {
        if (lock !== null) fs.closeSync(lock);
        throw e;
      }
    } catch (e) {
      release();
      throw e;
    }
  }

  /** Writes the registry (synced, by rename): one step, which a crash leaves before or after. */
  writeRegistry(registry: Registry): void {
    writeMarker(this.folder, markerWith(registry));
    this.registry = registry;
  }

  /** Where database `name` is. */
  pathOf(name: string): string {
    return path.join(this.folder, name);
  }

  /**
   * Opens database `name` (made if missing), damage in its files discarded. Gives the database
   * and why its rows were thrown away, if they were.
   */
  async openDatabase(name: string): Promise<{ database: Database; discarded: string | null }> {
    const folder = this.pathOf(name);
    const prepared = await withFolderLocked(folder, 'index', false, () => prepareDatabase(folder));
    let discarded = prepared.discarded;
    let db: Db;
    try {
      db = await openLevel(folder, prepared.create);
    } catch (e) {
      if (!(e instanceof LevelFolderDamagedError)) throw e;
      // damage that only LevelDB's open saw: thrown away as what the look saw
      discarded = e.why;
      await withFolderLocked(folder, 'index', false, () => discard(folder, e.why));
      db = await openLevel(folder, true);
    }
    if (discarded !== null) writeMarker(folder, MODEL_MARKER);
    return { database: new Database(folder, db, folder, true), discarded };
  }

  /** Removes database `name`'s folder (closed, and named by no generation of the registry). */
  removeDatabase(name: string): void {
    removeFolder(this.pathOf(name));
  }

  /** Removes the database folders no generation names: what a crash left between a registry write and a removal. */
  private removeOrphans(): void {
    const named = new Set(this.registry.generations.map((g) => g.db));
    for (const entry of entriesOf(this.folder) ?? []) {
      if (DATABASE.test(entry.name) && !named.has(entry.name)) removeFolder(path.join(this.folder, entry.name));
    }
  }

  /** Writes what the process says of its projections (not synced: it is advice, rewritten often). */
  writeStatus(status: StatusFile): void {
    const temporary = path.join(this.folder, `${STATUS}.tmp-${process.pid}`);
    try {
      fs.writeFileSync(temporary, `${JSON.stringify(status)}\n`, { mode: 0o600 });
      fs.renameSync(temporary, path.join(this.folder, STATUS));
    } catch {
      // advice only: a status that cannot be written leaves the last one, with its time
    }
  }

  /** Gives the folder back: to other opens of this process, and to other processes. */
  close(): void {
    if (this.lockFd !== null) fs.closeSync(this.lockFd);
    this.lockFd = null;
    this.release();
  }
}

/** The status another process wrote into `folder`, or `null` when there is none that reads. */
export function readStatus(folder: string): StatusFile | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(folder, STATUS), 'utf8')) as StatusFile;
  } catch {
    return null;
  }
}

function removeFolder(folder: string): void {
  try {
    fs.rmSync(folder, { recursive: true, force: true });
  } catch (e) {
    throw new LedgerIoError(folder, e);
  }
}
