/**
 * What the LevelDB tests share: the byte encodings the backend uses, its keys as the format
 * lays them out (`backends/level.ts`), a plain CBOR decoder to read its values as another program
 * would, and direct access to a folder's database with classic-level, under the backend.
 */
import { join } from 'node:path';
import { Decoder } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { type ByteEncodings, levelBackend } from '../../backends/level.js';
import { type Record, honchoCodec } from '../../lib/index.js';

/** Keys and values as bytes, as the backend reads and writes them. */
export const VIEW: ByteEncodings = { keyEncoding: 'view', valueEncoding: 'view' };

/** A plain CBOR decoder, as another program would read the values (64-bit integers as numbers). */
export const cbor = new Decoder({ useRecords: false, mapsAsObjects: true, int64AsNumber: true } as ConstructorParameters<typeof Decoder>[0]);

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

/** Changes (or reads) the folder's database directly, with classic-level. */
export async function tamper<T>(folder: string, change: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<T>): Promise<T> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(folder, { ...VIEW, createIfMissing: false });
  try {
    return await change(db);
  } finally {
    await db.close();
  }
}

/** Where a test keeps its LevelDB ledger: a folder in its home. */
export const folderOf = (home: { readonly dir: string }): string => join(home.dir, 'honcho.level');
