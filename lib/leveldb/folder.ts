/**
 * A folder that holds a LevelDB database for ledgerstore: a `level:` ledger's log, or a read
 * model (`--index`), looked at from its files alone. Everything LevelDB would do to a folder it
 * is handed is decided from this look first, so that LevelDB is handed only a folder that is
 * missing or empty (to create a database in) or that holds an intact database of the right kind:
 *
 * - **The marker file** (`marker.ts`), written before LevelDB creates the database. A folder of
 *   one kind is refused as the other, and a folder with any file that is neither the marker nor
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
 * Everything here reads and changes nothing: the folder's writes (the folder, its marker, a
 * discard) are `lib/database-folder.ts`'s, its locks `lib/folder-lock.ts`'s, a reader's copy
 * `lib/folder-snapshot.ts`'s. The files are read as LevelDB 1.20, bundled with classic-level
 * 3.0.0, writes them; under any other version the look refuses the folder before reading it
 * ({@link LevelDbVersionError}, `version.ts`), since a format that moved would be misread.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LedgerIoError, LevelFolderDamagedError } from '../errors.js';
import { batchPuts, batchSequence, type LogScan, scanLog } from './log-format.js';
import { type Manifest, readManifest } from './manifest.js';
import { type FolderFormat, isMarkerTemporary, MARKER, type Marker, readMarker } from './marker.js';
import { checkTable } from './table.js';
import { assertSupportedVersions, type LevelDbVersionError } from './version.js';

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

/** Whether `name` is one of LevelDB's file names. */
export const isLevelDbName = (name: string): boolean => LEVELDB_NAME.test(name);

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
 * @throws {@link LevelDbVersionError} when the installed classic-level (or its LevelDB) is not
 * the version these files are read as
 * @throws {@link LedgerIoError} when it is not a folder (ENOTDIR) or cannot be read
 */
export function inspectFolder(folder: string, format: FolderFormat): Found {
  assertSupportedVersions(folder);
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    throw new LedgerIoError(folder, e);
  }
  const names = new Set(entries.map((entry) => entry.name));
  const others = entries.filter(
    (entry) => entry.name !== MARKER && !isMarkerTemporary(entry.name) && !LEVELDB_NAME.test(entry.name),
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
  const data = entries.filter((name) => name !== MARKER && !isMarkerTemporary(name) && !RUNTIME_ONLY.has(name));
  return data.every((name) => CREATION.test(name)) ? 'empty' : 'database';
}
