/**
 * The read model's rows in LevelDB: the key layout, the rows' shapes and their checksums, the
 * totals, and the store of its sublevels. What reads and writes them is `read-model.ts`.
 *
 * ## Key layout (schema 2)
 *
 * Five sublevels (abstract-level's; their keys start `!<name>!`), keys and values as bytes. A
 * value is a row's CBOR (cbor-x, standard maps and arrays), then its checksum: the CRC-32C of
 * the whole key (the sublevel's prefix and the key) and the CBOR, as a CBOR byte string of 4
 * bytes (`0x44` and the CRC, big-endian). Every row read is checked against it.
 *
 * | sublevel | key | value |
 * |---|---|---|
 * | `meta` | `checkpoint` | `{ schema, resume: { position, cursor, fingerprint }, log }`: where the log was when the rows below were written |
 * | `meta` | `totals` | `[decided, sent, waiting, failed, skipped, pushes]` |
 * | `meta` | `building` | present while a build or a long catch-up is unfinished |
 * | `items` | the item's key (`t<session>\n<turn>`, `e<part>:<id>`, UTF-8) | `[seq, state, ids, stack]`: its place in decision order, `w`aiting `s`ent `f`ailed or s`k`ipped, a sent item's ids, and for a `conclude` or `unconclude` the stack its `sent` changes (`[c\|u, workspace, text]`) |
 * | `decisions` | `seq`, 8 bytes big-endian | `[item, action]` |
 * | `outbox` | `seq`, 8 bytes big-endian | `[item, action]`, for the waiting items only |
 * | `stacks` | workspace (1 byte), text length (4 bytes), text (UTF-8), push number (8 bytes) | `[item, id]`: a sent conclusion not undone yet |
 *
 * The folder holds LevelDB's files and the marker file `LEDGERSTORE` (`lib/level-folder.ts`):
 * `{"format": "ledgerstore/read-model", "schema": 2}`, with the stamps of the tables checked
 * already (`tables`), and while the database is being thrown away, why (`discard`).
 *
 *
 * @module
 */
import type { AbstractLevel, AbstractSublevel } from 'abstract-level';
import { Decoder, Encoder } from 'cbor-x';
import { crc32c, sealValue, unsealValue } from '../../level-files.js';
import type { Marker } from '../../level-folder.js';
import type { ResumePoint } from '../../log.js';
import type { Decision } from '../projection.js';
import { type Action, type Counts, type Item, WORKSPACES, type Workspace } from '../record.js';
import type { ItemState } from '../rules.js';

/** The version of the layout above. A read model of another version is rebuilt. */
export const SCHEMA = 2;

/** Records staged before a catch-up writes them as one batch. */
export const BATCH = 10_000;
/** Item rows kept in memory between batches of a catch-up: most `sent` records follow soon after their `decided`. */
export const CACHE = 100_000;

export type Bytes = Uint8Array;
/**
 * The read model's database: a folder's (classic-level), or any abstract-level database of bytes
 * a caller made (`new MemoryLevel<Uint8Array, Uint8Array>()` for tests). Every operation on it
 * passes byte encodings, whatever its own defaults are.
 */
export type Db = AbstractLevel<string | Buffer | Uint8Array, Bytes, Bytes>;
/** Keys and values as bytes, on every operation of the database. */
export const VIEW = { keyEncoding: 'view', valueEncoding: 'view' } as const;
export type Sub = AbstractSublevel<Db, string | Buffer | Uint8Array, Bytes, Bytes>;

export const encoder = new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false });
export const decoder = new Decoder({ useRecords: false, mapsAsObjects: true });
export const cbor = (value: unknown): Bytes => encoder.encode(value);
export const uncbor = <T>(bytes: Bytes): T => decoder.decode(bytes) as T;
export const utf8 = (text: string): Bytes => Buffer.from(text, 'utf8');

/** What a checkpoint holds. */
export interface Checkpoint {
  readonly schema: number;
  readonly resume: ResumePoint;
  /** The log's name when the checkpoint was written, for `ledgerstore index status`. */
  readonly log: string;
}

/** What `ledgerstore index status` shows. */
export interface IndexStatus {
  readonly folder: string;
  readonly schema: number | null;
  readonly checkpoint: Checkpoint | null;
  readonly building: boolean;
  readonly counts: Counts;
}

/** What a `conclude` (`c`) or `unconclude` (`u`) does to its stack once sent. */
export type StackOp = [op: 'c' | 'u', workspace: Workspace, text: string];

/** An item's row: its place in decision order, its state, a sent item's ids, the stack its `sent` changes. */
export type Row = [seq: number, state: 'w' | 's' | 'f' | 'k', ids: readonly string[] | null, stack: StackOp | null];

export function stackOpOf(action: Action): StackOp | null {
  if (action.type === 'conclude') return ['c', action.workspace, action.text];
  if (action.type === 'unconclude') return ['u', action.workspace, action.text];
  return null;
}

export const STATE_OF: { readonly [code in Row[1]]: ItemState } = {
  w: 'waiting',
  s: 'sent',
  f: 'failed',
  k: 'skipped',
};
export const CODE_OF: { readonly [state in ItemState]: Row[1] } = {
  waiting: 'w',
  sent: 's',
  failed: 'f',
  skipped: 'k',
};

export function seqKey(seq: number): Bytes {
  const key = Buffer.allocUnsafe(8);
  key.writeUIntBE(0, 0, 2);
  key.writeUIntBE(seq, 2, 6);
  return key;
}

export function seqOf(key: Bytes): number {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUIntBE(2, 6);
}

/** The prefix of a conclusion stack's keys: workspace, text length, text. */
export function stackPrefix(workspace: Workspace, text: string): Buffer {
  const body = utf8(text);
  const prefix = Buffer.allocUnsafe(5 + body.length);
  prefix[0] = WORKSPACES.indexOf(workspace);
  prefix.writeUInt32BE(body.length, 1);
  prefix.set(body, 5);
  return prefix;
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

export interface Totals {
  decided: number;
  sent: number;
  waiting: number;
  failed: number;
  skipped: number;
  /** Conclusions pushed so far: the next push's number. */
  pushes: number;
}

export const NO_TOTALS: Totals = { decided: 0, sent: 0, waiting: 0, failed: 0, skipped: 0, pushes: 0 };

/** What the marker file of a read model's folder says (see `lib/level-folder.ts`). */
export const MODEL_MARKER: Marker = { format: 'ledgerstore/read-model', schema: SCHEMA };

/**
 * The read model's LevelDB database and its sublevels, and each row's checksum: a row is its
 * CBOR, then the CRC-32C of its whole key (the sublevel's prefix, then its own) and its CBOR, as a
 * CBOR byte string of 4 bytes. A reset replaces the database, and so the store.
 */
export class Store {
  readonly meta: Sub;
  readonly items: Sub;
  readonly decisions: Sub;
  readonly outbox: Sub;
  readonly stacks: Sub;
  /** The CRC-32C of each sublevel's key prefix, which every key of it starts with. */
  private readonly prefixes = new Map<Sub, number>();

  constructor(readonly db: Db) {
    const sub = (name: string): Sub => {
      const made = db.sublevel<Bytes, Bytes>(name, { keyEncoding: 'view', valueEncoding: 'view' });
      this.prefixes.set(made, crc32c(made.prefixKey(new Uint8Array(0), 'view')));
      return made;
    };
    this.meta = sub('meta');
    this.items = sub('items');
    this.decisions = sub('decisions');
    this.outbox = sub('outbox');
    this.stacks = sub('stacks');
  }

  private checksum(sub: Sub, key: Bytes, body: Bytes): number {
    return crc32c(body, crc32c(key, this.prefixes.get(sub) as number));
  }

  /** The stored bytes of a row. */
  seal(sub: Sub, key: Bytes, value: unknown): Bytes {
    const body = cbor(value);
    return sealValue(body, this.checksum(sub, key, body));
  }

  /** What a row's stored bytes hold; `null` when they do not match their checksum (damage). */
  unseal<T>(sub: Sub, key: Bytes, bytes: Bytes): T | null {
    const body = unsealValue(bytes, (stored) => this.checksum(sub, key, stored));
    if (typeof body === 'string') return null;
    try {
      return uncbor<T>(body);
    } catch {
      return null; // bytes that match their checksum and are not CBOR: not ours either
    }
  }
}

/** The error LevelDB gives when it finds its files damaged. */
export const isCorruption = (e: unknown): boolean =>
  (e as { code?: unknown } | null)?.code === 'LEVEL_CORRUPTION' ||
  (e as { cause?: { code?: unknown } } | null)?.cause?.code === 'LEVEL_CORRUPTION';

export function decisionFrom([item, action]: [Item, Action]): Decision {
  return { item, action };
}

export function totalsFrom(values: number[]): Totals {
  const [decided = 0, sent = 0, waiting = 0, failed = 0, skipped = 0, pushes = 0] = values;
  return { decided, sent, waiting, failed, skipped, pushes };
}

export function totalsArray(t: Totals): number[] {
  return [t.decided, t.sent, t.waiting, t.failed, t.skipped, t.pushes];
}

export function countsOf(t: Totals): Counts {
  return { decided: t.decided, sent: t.sent, waiting: t.waiting, failed: t.failed, skipped: t.skipped };
}
