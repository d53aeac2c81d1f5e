/**
 * What the read-model tests share: the read model's LevelDB database opened directly with
 * classic-level, under the ledger, and its rows written as the layout has them
 * (`lib/honcho/read-model.ts`: a row's CBOR, then the CRC-32C of its whole key and its CBOR as a
 * 4-byte CBOR byte string), as a writer of the layout would.
 */
import type { AbstractSublevel } from 'abstract-level';
import { Encoder } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { crc32c } from '../../lib/level-files.js';

type Db = ClassicLevel<Uint8Array, Uint8Array>;
/** A sublevel of the read model's database, keys and values as bytes. */
export type Sublevel = AbstractSublevel<Db, string | Buffer | Uint8Array, Uint8Array, Uint8Array>;

const encoder = new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false });
const VIEW = { keyEncoding: 'view', valueEncoding: 'view' } as const;

/** A row of `sublevel` as the read model stores it under `key`. */
export function sealedRow(sublevel: string, key: Uint8Array, value: unknown): Buffer {
  const body = encoder.encode(value);
  const whole = Buffer.concat([Buffer.from(`!${sublevel}!`, 'latin1'), key]);
  const check = Buffer.alloc(5);
  check[0] = 0x44;
  check.writeUInt32BE(crc32c(body, crc32c(whole)), 1);
  return Buffer.concat([body, check]);
}

/** What a stored row holds (its checksum stripped, not checked). */
export const rowValue = (bytes: Uint8Array): unknown => encoder.decode(bytes.subarray(0, bytes.length - 5));

/** Runs `change` on the read model's database in `index`, opened directly, and closes it. */
export async function withIndexDb<T>(
  index: string,
  change: (db: Db, sublevel: (name: string) => Sublevel) => Promise<T>,
): Promise<T> {
  const db: Db = new ClassicLevel<Uint8Array, Uint8Array>(index, { ...VIEW, createIfMissing: false });
  try {
    return await change(db, (name) => db.sublevel<Uint8Array, Uint8Array>(name, VIEW));
  } finally {
    await db.close();
  }
}

/** The text of a marker file holding `fields` (`lib/level-folder.ts`: the JSON, then its CRC-32C in hex). */
export function markerText(fields: object): string {
  const line = JSON.stringify(fields);
  return `${line}\n${crc32c(Buffer.from(line, 'utf8')).toString(16).padStart(8, '0')}\n`;
}
