/**
 * The LevelDB log's format marker (the key `0x00` `format`, written with the first batch; the
 * folder's marker file says the same) and the checks of what a read finds under the marker's
 * key and the record keys. `index.ts` documents the format.
 *
 * @module
 */

import { onFirstUse } from '../../lib/dependencies.js';
import { DamagedError } from '../../lib/errors.js';
import type { Marker } from '../../lib/leveldb/marker.js';
import type { Position } from '../../lib/log.js';
import { positionOf } from './keys.js';
import { coders, hex } from './values.js';

/** The format this version writes. */
export const FORMAT = 'ledgerstore/level';
export const VERSION = 2;
/** The versions it reads: version 1 is version 2 without the values' checksums. */
const READS = [1, 2];
const META_PREFIX = 0x00;
export const META_KEY = Uint8Array.of(META_PREFIX, ...Buffer.from('format', 'ascii'));
/** The marker's value in the database. */
export const metaValue = onFirstUse(() =>
  Uint8Array.from(coders().encoder.encode({ format: FORMAT, version: VERSION })),
);
/** What the marker file of a folder that holds a log says. */
export const FOLDER_MARKER: Marker = { format: FORMAT, version: VERSION };

/** Damage unless `key` is the key of the record at `position`. */
export function checkKey(name: string, key: Uint8Array, position: Position): void {
  const found = positionOf(key);
  if (found === position) return;
  if (found === null)
    throw new DamagedError(
      name,
      position + 1,
      `where record ${position + 1} should be is the key ${hex(key)}, which is not a record's`,
    );
  throw new DamagedError(name, position + 1, `record ${position + 1} is missing: the next record is ${found + 1}`);
}

/** The version a format marker names; damage unless it is ledgerstore's, of a version this one reads. */
export function checkMarker(name: string, value: Uint8Array): number {
  let marker: unknown;
  try {
    marker = coders().decoder.decode(value);
  } catch {
    marker = undefined;
  }
  const { format, version } = (typeof marker === 'object' && marker !== null ? marker : {}) as {
    format?: unknown;
    version?: unknown;
  };
  if (format !== FORMAT)
    throw new DamagedError(name, 0, `the format marker is not ledgerstore's (${hex(value.subarray(0, 32))})`);
  if (typeof version !== 'number' || !READS.includes(version)) {
    throw new DamagedError(
      name,
      0,
      `the log is in version ${String(version)} of the format, which this ledgerstore does not read (it reads versions ${READS.join(' and ')})`,
    );
  }
  return version;
}
