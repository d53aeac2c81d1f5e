/**
 * A read model's layout (schema 3): where the projections of a log keep their rows. Read and
 * written by `folder.ts` (the folder and its files), `registry.ts` (which rows answer which
 * projection) and `generation.ts` (the rows).
 *
 * ## The folder
 *
 * | entry | what it is |
 * |---|---|
 * | `LEDGERSTORE` | the marker (`lib/leveldb/marker.ts`: a line of JSON, then its CRC-32C): `{"format": "ledgerstore/read-model", "schema": 3, "registry": ...}`, the registry below; rewritten (synced, by rename) whenever it changes |
 * | `LOCK` | held (an open-file-description lock) by the one process that has the read model open |
 * | `STATUS` | what that process says of each projection, rewritten as a build goes (JSON, not synced): for `ledgerstore index status` from another process |
 * | `db-<n>/` | a LevelDB database (classic-level), with a marker of its own: `{"format": "ledgerstore/read-model", "schema": 3}`, the stamps of its tables checked already (`tables`), and while it is being thrown away, why (`discard`) |
 *
 * A caller's database (`index` given an abstract-level database) holds everything in itself: the
 * registry at the key `!ledgerstore!registry`, the rows as below.
 *
 * ## The registry
 *
 * `{ generations: [{ id, projection, version, db, role }], next }`: every set of rows, its
 * projection and version, the database it is in (`db-<n>`; `null` in a caller's database), and
 * its role: `serving` (it answers, and every append changes it), `building` (being built; it
 * answers nothing until it has caught up and takes over) or `retired` (taken over; its rows are
 * being deleted). A projection has at most one of each. `next` numbers the ids and databases.
 *
 * ## A generation's rows
 *
 * Each generation's keys start `!<id>!` (`!items.1!`, its id: projection and number): then `r`
 * and the projection's own key (UTF-8) for its rows, or `m` and a name for what the engine keeps
 * of it, in the same batches as its rows:
 *
 * | key | value |
 * |---|---|
 * | `!<id>!mcheckpoint` | `{ resume: { position, cursor, fingerprint }, log }`: where the log was when the rows were written; absent until its first complete batch |
 * | `!<id>!mversion` | the projection's version the rows are of |
 * | `!<id>!mbuilding` | present while a build or a catch-up longer than a batch is unfinished: the rows are then never used |
 * | `!<id>!r<key>` | a row, as the projection's `apply` put it |
 *
 * Every value is its CBOR (cbor-x, standard maps and arrays), then its checksum: the CRC-32C of
 * the whole key and the CBOR, as a CBOR byte string of 4 bytes (`0x44` and the CRC, big-endian).
 * Every value read is checked against it.
 *
 * @module
 */
import { cborX, onFirstUse } from '../dependencies.js';
import { crc32c } from '../leveldb/crc32c.js';
import type { Marker } from '../leveldb/marker.js';
import type { ResumePoint } from '../log.js';
import { sealValue, unsealValue } from '../sealed-value.js';

/** Keys and values, as `database.ts` has them (not imported from there: it imports this module). */
type Bytes = Uint8Array;

/** The version of the layout above. A read model of another version is built again. */
export const SCHEMA = 3;

/** What the marker of a read model's database folder says (see `lib/leveldb/marker.ts`). */
export const MODEL_MARKER: Marker = { format: 'ledgerstore/read-model', schema: SCHEMA };

/** The key of the registry in a caller's database. */
export const REGISTRY_KEY = Buffer.from('!ledgerstore!registry', 'latin1');

const coders = onFirstUse(() => {
  const { Encoder, Decoder } = cborX();
  return {
    encoder: new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false }),
    decoder: new Decoder({ useRecords: false, mapsAsObjects: true }),
  };
});
export const cbor = (value: unknown): Bytes => coders().encoder.encode(value);
export const uncbor = <T>(bytes: Bytes): T => coders().decoder.decode(bytes) as T;

/** Where a generation's rows are: the log's point after the records they include. */
export interface Checkpoint {
  readonly resume: ResumePoint;
  /** The log's name when the checkpoint was written, for `ledgerstore index status`. */
  readonly log: string;
}

/**
 * Where an open resumes the log, given the checkpoints of the rows it catches up: the earliest
 * (every later one is caught up from there too); `undefined` for none. The one rule, for the
 * open (`set.ts`) and for `ledgerstore index status`, which says how far behind that point is.
 */
export function earliestCheckpoint(checkpoints: Iterable<Checkpoint>): Checkpoint | undefined {
  let first: Checkpoint | undefined;
  for (const c of checkpoints) if (first === undefined || c.resume.position < first.resume.position) first = c;
  return first;
}

/** The first key after every key that starts with `prefix`. */
export function after(prefix: Bytes): Bytes {
  const end = Buffer.from(prefix);
  for (let n = end.length - 1; n >= 0; n--) {
    if ((end[n] as number) < 0xff) {
      end[n] = (end[n] as number) + 1;
      return end.subarray(0, n + 1);
    }
  }
  return Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
}

/** The stored bytes of a value under `key`: its CBOR and their checksum. */
export function seal(key: Bytes, body: Bytes, keyCrc?: number): Bytes {
  return sealValue(body, crc32c(body, keyCrc ?? crc32c(key)));
}

/** What stored bytes under `key` hold; `null` when they do not match their checksum (damage). */
export function unseal<T>(key: Bytes, bytes: Bytes, keyCrc?: number): T | null {
  const body = unsealValue(bytes, (stored) => crc32c(stored, keyCrc ?? crc32c(key)));
  if (typeof body === 'string') return null;
  try {
    return uncbor<T>(body);
  } catch {
    return null; // bytes that match their checksum and are not CBOR: not ours either
  }
}
