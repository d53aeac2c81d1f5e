/**
 * What the read-model tests share: a read model's folder looked into as the layout has it
 * (`lib/projections/layout.ts`: the marker's registry names each projection's rows and the
 * database `db-<n>/` they are in; a row's key is `!<id>!r<key>`, the engine's own `!<id>!m<name>`;
 * a value is its CBOR, then the CRC-32C of its whole key and its CBOR as a 4-byte CBOR byte
 * string), and a database opened directly with classic-level to change rows as a writer of the
 * layout would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Encoder } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { crc32c } from '../../lib/leveldb/crc32c.js';
import { inspectFolder } from '../../lib/leveldb/folder.js';

type Db = ClassicLevel<Uint8Array, Uint8Array>;

const encoder = new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false });
const VIEW = { keyEncoding: 'view', valueEncoding: 'view' } as const;

/** A generation of rows as the registry lists it. */
export interface RegistryEntry {
  readonly id: string;
  readonly projection: string;
  readonly version: number;
  readonly db: string | null;
  readonly role: string;
}

/** The fields of the read model's marker in `index` (its checksum line not checked). */
export function markerOf(index: string): { [field: string]: unknown } {
  const [line] = readFileSync(join(index, 'LEDGERSTORE'), 'utf8').split('\n');
  return JSON.parse(line as string) as { [field: string]: unknown };
}

/** The generations the registry of the read model in `index` lists. */
export function registryOf(index: string): readonly RegistryEntry[] {
  return (markerOf(index)['registry'] as { generations: RegistryEntry[] }).generations;
}

/** The generation that serves `projection` in the read model in `index`. */
export function servingOf(index: string, projection: string): RegistryEntry {
  const entry = registryOf(index).find((g) => g.projection === projection && g.role === 'serving');
  if (entry === undefined) throw new Error(`${index}: no rows serve the projection ${projection}`);
  return entry;
}

/** The folder of the database the rows of `projection` are in (the only one, for a read model built at once). */
export function databaseOf(index: string, projection = 'items'): string {
  return join(index, servingOf(index, projection).db as string);
}

/**
 * The tables of the database in `db` that LevelDB reads: those its manifest names. A close in
 * the middle of a memtable flush or a compaction (LevelDB gives up on it at shutdown) leaves its
 * output table in the folder, named by no manifest, until the next open deletes it unread.
 */
export function liveTablesOf(db: string): string[] {
  const found = inspectFolder(db, 'ledgerstore/read-model');
  if (found.state !== 'database') throw new Error(`${db}: not a whole database (${found.state})`);
  return [...found.live.tables.values()].map((table) => table.name);
}

/** The key of a generation's row (`r<key>`) or of what the engine keeps of it (`m<name>`). */
export const keyOf = (id: string, key: string): Buffer => Buffer.from(`!${id}!${key}`, 'utf8');

/** A value as the read model stores it under `key`. */
export function sealedRow(key: Uint8Array, value: unknown): Buffer {
  const body = encoder.encode(value);
  const check = Buffer.alloc(5);
  check[0] = 0x44;
  check.writeUInt32BE(crc32c(body, crc32c(key)), 1);
  return Buffer.concat([body, check]);
}

/** What a stored value holds (its checksum stripped, not checked). */
export const rowValue = (bytes: Uint8Array): unknown => encoder.decode(bytes.subarray(0, bytes.length - 5));

/**
 * Runs `change` on the database of the read model in `index` that holds the rows of
 * `projection`, opened directly, with the key of its rows (`key('r...')`), and closes it.
 */
export async function withIndexDb<T>(
  index: string,
  projection: string,
  change: (db: Db, key: (suffix: string) => Buffer) => Promise<T>,
): Promise<T> {
  const entry = servingOf(index, projection);
  const db: Db = new ClassicLevel<Uint8Array, Uint8Array>(join(index, entry.db as string), {
    ...VIEW,
    createIfMissing: false,
  });
  try {
    return await change(db, (suffix) => keyOf(entry.id, suffix));
  } finally {
    await db.close();
  }
}

/** The text of a marker file holding `fields` (`lib/leveldb/marker.ts`: the JSON, then its CRC-32C in hex). */
export function markerText(fields: object): string {
  const line = JSON.stringify(fields);
  return `${line}\n${crc32c(Buffer.from(line, 'utf8')).toString(16).padStart(8, '0')}\n`;
}
