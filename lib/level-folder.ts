/**
 * A folder that holds a LevelDB database for ledgerstore: a `level:` ledger's log, or a read
 * model (`--index`). Everything LevelDB would do to a folder it is handed is decided here first,
 * from the folder's files alone, so that LevelDB is handed only a folder that is missing or
 * empty (to create a database in) or that holds an intact database of the right kind:
 *
 * - **The marker file.** `LEDGERSTORE`, written (synced, by rename) before LevelDB creates the
 *   database: one line of JSON saying what the folder holds (`format`: `ledgerstore/level` or
 *   `ledgerstore/read-model`) and what its owner keeps there, then the CRC-32C of that line in
 *   hex. LevelDB leaves a file of that name alone (it is not one of its names). A folder of one
 *   kind is refused as the other, and a folder with any file that is neither the marker nor
 *   LevelDB's is refused as not a database folder at all: nothing in it is touched.
 * - **What counts as empty.** No entries; or only what an open that died while creating the
 *   database leaves: the marker, LevelDB's `LOCK` and info logs (`LOG`, `LOG.old`), and the
 *   first manifest with its temporary file, without `CURRENT`. LevelDB writes `CURRENT` last when
 *   it creates a database, so none of these can hold a record.
 * - **Damage, seen before LevelDB opens.** LevelDB files without `CURRENT` (LevelDB would start
 *   a new database there and delete the old tables); a `CURRENT` that does not name a manifest;
 *   a manifest that does not read through or names a table that is missing or of another size;
 *   a write-ahead log with a hole (bytes that do not read, with a write after them: LevelDB
 *   drops them and keeps the writes after them) or a batch missing between two that are there
 *   (their sequence numbers do not follow); any write-ahead log but the last that does not end
 *   whole; and, when asked, a table whose blocks do not match their checksums.
 *
 * A read-only look never writes: a reader opens a copy of the live files made aside
 * ({@link snapshotFolder}), never the folder, since LevelDB has no read-only open.
 *
 * Longer than most files, and earned: one concern, a LevelDB folder before and around LevelDB's
 * open (its look, marker, locks, snapshots and discard).
 *
 * @module
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { tryLock } from 'fs-native-extensions';
import { type LedgerError, LedgerIoError, LevelFolderDamagedError, LockedError, type LockHolder } from './errors.js';
import { nodeFileIO } from './file-io.js';
import {
  batchPuts,
  batchSequence,
  checkTable,
  crc32c,
  type LogScan,
  type Manifest,
  readManifest,
  scanLog,
} from './level-files.js';

/** The name of the marker file. */
export const MARKER = 'LEDGERSTORE';
/** A marker being written: `LEDGERSTORE.tmp-<pid>`, one per process, so that two creators never share one. */
const MARKER_TEMPORARY = /^LEDGERSTORE\.tmp-\d+$/;
const FOLDER_MODE = 0o700;
const FILE_MODE = 0o600;

/** What a marker says a folder holds: its `format` field. */
export type FolderFormat = 'ledgerstore/level' | 'ledgerstore/read-model';

/** The marker's fields: `format`, and whatever its owner keeps there (JSON). */
export interface Marker {
  readonly format: FolderFormat;
  readonly [field: string]: unknown;
}

/** LevelDB's file names (`db/filename.cc`), and the ones it needs only while it runs. */
const LEVELDB_NAME = /^(CURRENT|LOCK|LOG|LOG\.old|MANIFEST-\d+|\d+\.(log|ldb|sst|dbtmp))$/;
const RUNTIME_ONLY = new Set(['LOCK', 'LOG', 'LOG.old']);
/** What LevelDB's creation of a database writes before `CURRENT`. */
const CREATION = /^(MANIFEST-000001|000001\.dbtmp)$/;

/** The live files of an intact database, as its manifest names them. */
export interface LiveFiles {
  /** The manifest that `CURRENT` names. */
  readonly manifest: string;
  readonly tables: ReadonlyMap<
    number,
    { readonly name: string; readonly size: number; readonly smallest: Uint8Array; readonly largest: Uint8Array }
  >;
  /** The write-ahead logs LevelDB replays at open, oldest first, each read through. */
  readonly logs: readonly { readonly name: string; readonly scan: LogScan }[];
}

/**
 * The largest key the database holds that starts with the byte `prefix`, from its files alone:
 * the largest key of each table (the manifest says), and each key the write-ahead logs put;
 * `null` when there is none, `'unknown'` when a table holds keys after the prefix's (its largest
 * key then says nothing of the prefix's). Deletions are not looked at: for keys that are never
 * deleted (a ledger's records).
 */
export function largestKey(live: LiveFiles, prefix: number): Uint8Array | null | 'unknown' {
  let largest: Uint8Array | null = null;
  const consider = (key: Uint8Array): void => {
    if (key[0] === prefix && (largest === null || Buffer.compare(key, largest) > 0)) largest = key;
  };
  for (const table of live.tables.values()) {
    if ((table.largest[0] ?? 0) > prefix) return 'unknown';
    consider(table.largest);
  }
  for (const { scan } of live.logs) for (const { data } of scan.records) batchPuts(data).forEach(consider);
  return largest;
}

/** What a folder holds, looked at without changing it. */
export type Found =
  | { readonly state: 'missing' }
  /** Nothing, or what an open that died while creating the database left (see the module's doc). */
  | { readonly state: 'empty'; readonly marker: Marker | null }
  | { readonly state: 'database'; readonly marker: Marker | null; readonly live: LiveFiles }
  /** The marker says this kind (or there is none), and the database is damaged: `file` is where. */
  | { readonly state: 'damaged'; readonly marker: Marker | null; readonly file: string | null; readonly why: string }
  /** Not a folder of this kind: files that are not LevelDB's, or a marker of the other kind. */
  | { readonly state: 'foreign'; readonly why: string };

/**
 * The fields of the marker file in `folder`, why it is not one (damaged), or `null` when there is
 * none.
 * @throws {@link LedgerIoError} when it cannot be read
 */
export function markerOf(folder: string): Marker | string | null {
  const file = path.join(folder, MARKER);
  try {
    return readMarker(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LedgerIoError(file, e);
  }
}

/** Whether `name` is one of the marker's temporary files (`LEDGERSTORE.tmp-<pid>`). */
export const isMarkerTemporary = (name: string): boolean => MARKER_TEMPORARY.test(name);

/** Whether `name` is one of LevelDB's file names. */
export const isLevelDbName = (name: string): boolean => LEVELDB_NAME.test(name);

/** The fields of a marker file, or why it is not one. */
function readMarker(file: string): Marker | string {
  const text = fs.readFileSync(file, 'utf8');
  const [line = '', check = '', ...rest] = text.split('\n');
  if (rest.join('') !== '' || !/^[0-9a-f]{8}$/.test(check))
    return 'the marker file is not two lines, its fields and their checksum';
  if (crc32c(Buffer.from(line, 'utf8')).toString(16).padStart(8, '0') !== check)
    return 'the marker file does not match its checksum';
  let fields: unknown;
  try {
    fields = JSON.parse(line);
  } catch {
    return 'the marker file is not JSON';
  }
  const format = (fields as { format?: unknown } | null)?.format;
  if (format !== 'ledgerstore/level' && format !== 'ledgerstore/read-model')
    return `the marker file names no format ledgerstore writes (${JSON.stringify(format)})`;
  return fields as Marker;
}

/**
 * Writes the marker file: to a temporary file, synced, renamed over the marker, and the folder
 * synced, so that a crash leaves the old marker or the new one.
 * @throws {@link LedgerIoError} when it cannot be written
 */
export function writeMarker(folder: string, marker: Marker): void {
  const line = JSON.stringify(marker);
  const text = `${line}\n${crc32c(Buffer.from(line, 'utf8')).toString(16).padStart(8, '0')}\n`;
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

const describeType = (entry: fs.Dirent): string =>
  entry.isDirectory()
    ? 'a folder'
    : entry.isSymbolicLink()
      ? 'a symbolic link'
      : entry.isFIFO()
        ? 'a FIFO'
        : entry.isSocket()
          ? 'a socket'
          : 'a device';

/** What a marker's format is called in messages. */
const FORMAT_NAME: { readonly [format in FolderFormat]: string } = {
  'ledgerstore/level': 'a LevelDB ledger (a log)',
  'ledgerstore/read-model': 'a read model (an index)',
};

/**
 * Looks at `folder` without changing it, for a database of `format`: is it missing, empty, an
 * intact database, damaged, or not a folder of this kind at all.
 * @throws {@link LedgerIoError} when it is not a folder (ENOTDIR) or cannot be read
 */
export function inspectFolder(folder: string, format: FolderFormat): Found {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    throw new LedgerIoError(folder, e);
  }
  const names = new Set(entries.map((entry) => entry.name));
  const others = entries.filter(
    (entry) => entry.name !== MARKER && !MARKER_TEMPORARY.test(entry.name) && !LEVELDB_NAME.test(entry.name),
  );
  // a read model's folder (its databases in folders of their own) is told as what it is, not by its files
  const markerEntry = entries.find((entry) => entry.name === MARKER);
  if (others.length > 0 && markerEntry?.isFile() === true) {
    const found = readFile(folder, MARKER, (file) => readMarker(file));
    if (typeof found !== 'string' && found.format !== format)
      return { state: 'foreign', why: `it holds ${FORMAT_NAME[found.format]}, not ${FORMAT_NAME[format]}` };
  }
  if (others.length > 0) {
    const listed = others
      .slice(0, 3)
      .map((entry) => entry.name)
      .join(', ');
    return {
      state: 'foreign',
      why: `it holds files that are not a LevelDB database's (${listed}${others.length > 3 ? ', ...' : ''})`,
    };
  }
  // before anything is read: a FIFO would block the read, a device give anything
  const special = entries.find((entry) => !entry.isFile());
  let marker: Marker | null = null;
  if (names.has(MARKER) && special?.name !== MARKER) {
    const found = readFile(folder, MARKER, (file) => readMarker(file));
    if (typeof found === 'string') return { state: 'damaged', marker: null, file: MARKER, why: found };
    if (found.format !== format)
      return { state: 'foreign', why: `it holds ${FORMAT_NAME[found.format]}, not ${FORMAT_NAME[format]}` };
    marker = found;
  }
  const damaged = (file: string | null, why: string): Found => ({ state: 'damaged', marker, file, why });
  if (special !== undefined) return damaged(special.name, `${special.name} is ${describeType(special)}, not a file`);
  const data = [...names].filter((name) => LEVELDB_NAME.test(name) && !RUNTIME_ONLY.has(name));
  // its owner marked it for discarding, and did not finish: what is left is not looked at
  if (marker?.['discard'] !== undefined && data.length > 0) return damaged(null, String(marker['discard']));
  if (!names.has('CURRENT')) {
    if (data.every((name) => CREATION.test(name))) return { state: 'empty', marker };
    return damaged(
      'CURRENT',
      `the folder holds LevelDB files (${data.slice(0, 3).join(', ')}${data.length > 3 ? ', ...' : ''}) but no CURRENT, which names the database's manifest: it was deleted or never written`,
    );
  }
  const current = readFile(folder, 'CURRENT', (file) => fs.readFileSync(file, 'latin1'));
  const manifestName = /^(MANIFEST-\d+)\n$/.exec(current)?.[1];
  if (manifestName === undefined)
    return damaged('CURRENT', `CURRENT does not name a manifest (${JSON.stringify(current.slice(0, 40))})`);
  if (!names.has(manifestName))
    return damaged(manifestName, `the manifest that CURRENT names, ${manifestName}, is missing`);
  const manifestScan = scanLog(readFile(folder, manifestName, (file) => fs.readFileSync(file)));
  const manifestBreak =
    manifestScan.hole ??
    (manifestScan.tail !== null && !manifestScan.tail.why.includes('cut off') ? manifestScan.tail : null);
  if (manifestBreak !== null)
    return damaged(manifestName, `the manifest does not read at byte ${manifestBreak.offset} (${manifestBreak.why})`);
  let manifest: Manifest;
  try {
    manifest = readManifest(manifestScan.records);
  } catch (e) {
    return damaged(manifestName, `the manifest does not read: ${(e as Error).message}`);
  }
  if (manifest.comparator !== null && manifest.comparator !== 'leveldb.BytewiseComparator') {
    return damaged(
      manifestName,
      `the manifest names a comparator that is not LevelDB's bytewise one (${manifest.comparator})`,
    );
  }
  const tables = new Map<number, { name: string; size: number; smallest: Uint8Array; largest: Uint8Array }>();
  for (const [number, { size, smallest, largest }] of manifest.tables) {
    const base = String(number).padStart(6, '0');
    const name = names.has(`${base}.ldb`) ? `${base}.ldb` : `${base}.sst`;
    if (!names.has(name)) return damaged(`${base}.ldb`, `the table ${base}.ldb that the manifest names is missing`);
    const actual = readFile(folder, name, (file) => fs.statSync(file).size);
    if (actual !== size)
      return damaged(
        name,
        `the table ${name} is ${actual} bytes, and the manifest says ${size}: it was cut or changed`,
      );
    tables.set(number, { name, size, smallest, largest });
  }
  const currentLog = `${String(manifest.logNumber).padStart(6, '0')}.log`;
  // a read model's writes are not synced: its log lost whole is only its last writes lost
  if (format === 'ledgerstore/level' && manifest.logNumber > 0 && !names.has(currentLog)) {
    return damaged(
      currentLog,
      `the write-ahead log ${currentLog} that the manifest names is missing: the writes in it since the last table are lost`,
    );
  }
  const logs = [...names]
    .flatMap((name) => {
      const number = /^(\d+)\.log$/.exec(name)?.[1];
      return number === undefined ? [] : [{ name, number: Number(number) }];
    })
    .filter(({ number }) => number >= manifest.logNumber || number === manifest.prevLogNumber)
    .sort((a, b) => a.number - b.number)
    .map(({ name }) => ({ name, scan: scanLog(readFile(folder, name, (file) => fs.readFileSync(file))) }));
  let expected: number | null = null;
  for (const [n, { name, scan }] of logs.entries()) {
    if (scan.hole !== null)
      return damaged(
        name,
        `the write-ahead log ${name} has bytes that do not read at byte ${scan.hole.offset} (${scan.hole.why}) with writes after them, which LevelDB would drop`,
      );
    if (scan.tail !== null && n < logs.length - 1)
      return damaged(
        name,
        `the write-ahead log ${name} does not end whole (byte ${scan.tail.offset}: ${scan.tail.why}), and a later log follows it`,
      );
    for (const { data, offset } of scan.records) {
      const batch = batchSequence(data);
      if (batch === null)
        return damaged(name, `the write-ahead log ${name} holds a record at byte ${offset} too short to be a batch`);
      if (expected !== null && batch.sequence !== expected) {
        return damaged(
          name,
          `the write-ahead log ${name} is missing writes before byte ${offset}: its batches jump from sequence ${expected} to ${batch.sequence}`,
        );
      }
      expected = batch.sequence + batch.count;
    }
  }
  return { state: 'database', marker, live: { manifest: manifestName, tables, logs } };
}

/** Reads one file of the folder; a failure is the folder's `LedgerIoError`. */
function readFile<T>(folder: string, name: string, read: (file: string) => T): T {
  const file = path.join(folder, name);
  try {
    return read(file);
  } catch (e) {
    throw new LedgerIoError(file, e);
  }
}

/** A table's identity on disk: a change through the file system changes one of these. */
export type TableStamp = readonly [size: number, ino: number, mtimeNs: string, ctimeNs: string];

/** The stamp of a table file now. */
function stampOf(file: string): TableStamp {
  const stat = fs.statSync(file, { bigint: true });
  return [Number(stat.size), Number(stat.ino), String(stat.mtimeNs), String(stat.ctimeNs)];
}

/**
 * Checks the live tables' blocks against their checksums (see `checkTable`), skipping those
 * `verified` holds with the same stamp (checked before, and not written since). Gives the stamps
 * of every live table, all now verified.
 * @throws {@link LevelFolderDamagedError} naming the first table that is damaged
 */
export function verifyTables(
  folder: string,
  live: LiveFiles,
  verified: { readonly [number: string]: TableStamp } = {},
): { [number: string]: TableStamp } {
  const stamps: { [number: string]: TableStamp } = {};
  for (const [number, { name }] of live.tables) {
    const stamp = readFile(folder, name, stampOf);
    const known = verified[String(number)];
    if (known === undefined || known.join() !== stamp.join()) {
      const why = checkTable(readFile(folder, name, (f) => fs.readFileSync(f)));
      if (why !== null) throw new LevelFolderDamagedError(folder, name, `the table ${name} is damaged: ${why}`);
    }
    stamps[String(number)] = stamp;
  }
  return stamps;
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
      locked = tryLock(fd, 0, 0, { shared });
    } catch (e) {
      throw new LedgerIoError(file, e);
    }
    if (!locked) throw new LockedError(folder, { holder });
    return await body();
  } finally {
    fs.closeSync(fd);
  }
}

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
  const doomed = names.filter((name) => LEVELDB_NAME.test(name) && name !== 'LOCK' && name !== 'CURRENT');
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
    const db = new ClassicLevel<Uint8Array, Uint8Array>(copy, { keyEncoding: 'view', valueEncoding: 'view' });
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

/**
 * What `folder` holds, looked at without opening it (an open creates a database): `missing`
 * when there is no such folder, `empty` when it holds no LevelDB database (nothing, or what a
 * creation that died left), else `database` (a database, damaged or not, or other files).
 * @throws {@link LedgerIoError} when `folder` is not a folder (ENOTDIR) or cannot be looked into
 */
export function levelFolder(folder: string): 'missing' | 'empty' | 'database' {
  let entries: string[];
  try {
    entries = fs.readdirSync(folder);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new LedgerIoError(folder, e);
  }
  const data = entries.filter((name) => name !== MARKER && !MARKER_TEMPORARY.test(name) && !RUNTIME_ONLY.has(name));
  return data.every((name) => CREATION.test(name)) ? 'empty' : 'database';
}

/** The error inside abstract-level's `LEVEL_DATABASE_NOT_OPEN`, which says why. */
export function causeOf(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'LEVEL_DATABASE_NOT_OPEN' && e instanceof Error && e.cause !== undefined ? e.cause : e;
}

/**
 * A failure of a LevelDB database (`name`'s: a ledger's log, or a read model), as a ledger
 * error: another holder's lock, a corruption LevelDB found (damage, with its words), or I/O.
 */
export function levelFailure(name: string, e: unknown, holder: LockHolder): LedgerError {
  const cause = causeOf(e);
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'LEVEL_LOCKED') return new LockedError(name, { cause, holder });
  if (code === 'LEVEL_CORRUPTION')
    return new LevelFolderDamagedError(name, null, `LevelDB finds it damaged: ${(cause as Error).message}`, { cause });
  return new LedgerIoError(name, cause);
}
