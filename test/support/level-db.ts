/**
 * What the LevelDB tests share: the byte encodings the backend uses, its keys and values as the
 * format lays them out (`backends/level/index.ts`: a record's CBOR, then its CRC-32C as a 4-byte CBOR
 * byte string), a plain CBOR decoder to read its values as another program would, and direct
 * access to a folder's database with classic-level, under the backend.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decoder } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { type ByteEncodings, levelBackend } from '../../backends/level/index.js';
import { honchoCodec, type Record } from '../../lib/index.js';
import { crc32c } from '../../lib/leveldb/crc32c.js';

/** Keys and values as bytes, as the backend reads and writes them. */
export const VIEW: ByteEncodings = { keyEncoding: 'view', valueEncoding: 'view' };

/** A plain CBOR decoder, as another program would read the values (64-bit integers as numbers). */
export const cbor = new Decoder({
  useRecords: false,
  mapsAsObjects: true,
  int64AsNumber: true,
} as ConstructorParameters<typeof Decoder>[0]);

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The key of the format marker. */
export const metaKey = (): Uint8Array => Uint8Array.of(0x00, ...Buffer.from('format'));

/** The key of the record at `position`. */
export const recordKey = (position: number): Uint8Array => {
  const key = Buffer.alloc(9);
  key[0] = 0x01;
  key.writeUIntBE(position, 3, 6); // positions in the tests fit in 6 bytes; the first two stay 0
  return key;
};

/** A record's value as the format stores it at `position`: its CBOR `body`, then the checksum of its key and body. */
export function sealed(position: number, body: Uint8Array): Buffer {
  const check = Buffer.alloc(5);
  check[0] = 0x44;
  check.writeUInt32BE(crc32c(body, crc32c(recordKey(position))), 1);
  return Buffer.concat([body, check]);
}

/** The CBOR of the record a stored value (in hex, as {@link dump} gives it) holds; throws unless its checksum is its position's. */
export function bodyOf(value: string, position: number): Buffer {
  const bytes = Buffer.from(value, 'hex');
  const body = bytes.subarray(0, bytes.length - 5);
  if (!sealed(position, body).equals(bytes))
    throw new Error(`the value at ${position} does not end with its checksum: ${value}`);
  return body;
}

/** Puts `body`, sealed, as the record at `position` of the folder's database, as another writer of the format would. */
export const putRecord = (folder: string, position: number, body: Uint8Array): Promise<void> =>
  tamper(folder, (db) => db.put(recordKey(position), sealed(position, body), VIEW));

/** The Honcho ledger's log in the folder `folder`. */
export const backendAt = (folder: string) => levelBackend(folder, { codec: honchoCodec });

/** Appends `records` to the log in `folder`, in one batch, and closes it. */
export async function write(folder: string, records: readonly Record[]): Promise<void> {
  const log = await backendAt(folder).open();
  await log.append(records);
  await log.close();
}

/** Every key and value in the folder's database, read with classic-level directly. */
export async function dump(folder: string): Promise<[string, string][]> {
  return tamper(folder, async (db) => (await db.iterator().all()).map(([key, value]) => [hex(key), hex(value)]));
}

/** Changes (or reads) the folder's database directly, with classic-level (creating it when `create`). */
export async function tamper<T>(
  folder: string,
  change: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<T>,
  create = false,
): Promise<T> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(folder, { ...VIEW, createIfMissing: create });
  try {
    return await change(db);
  } finally {
    await db.close();
  }
}

/** Where a test keeps its LevelDB ledger: a folder in its home. */
export const folderOf = (home: { readonly dir: string }): string => join(home.dir, 'honcho.level');

/**
 * Every entry of a folder as it is on disk: name, type, size, modification time and, for a
 * file, the SHA-256 of its bytes; in name order. Equal before and after: nothing was changed.
 */
export function filesOf(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .map((name) => {
      const file = join(folder, name);
      const stat = lstatSync(file, { bigint: true });
      const hash = stat.isFile()
        ? createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16)
        : stat.isDirectory()
          ? 'folder'
          : 'special';
      return `${name} ${stat.size} ${stat.mtimeNs} ${hash}`;
    });
}

/** Flips the bits of `mask` in the byte at `at`. */
export function flipBits(bytes: Uint8Array, at: number, mask: number): void {
  if (at < 0 || at >= bytes.length) throw new RangeError(`no byte ${at} in ${bytes.length}`);
  bytes[at] = (bytes[at] as number) ^ mask;
}
