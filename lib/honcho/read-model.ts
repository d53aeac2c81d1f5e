/**
 * The read model: a ledger's state kept in LevelDB (classic-level, in a folder of its own), so
 * that an open reads only the records appended since its checkpoint, and queries are answered
 * from LevelDB rather than from a copy of the whole ledger in memory. The log stays the truth:
 * the read model is derived, can be deleted at any time, and is rebuilt from the log.
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
 * ## The checkpoint
 *
 * Every change to the rows is one atomic batch that also writes the checkpoint: the log's
 * resume point after the records the rows include (its position, the backend's cursor, and the
 * fingerprint of the last record, by which the log tells whether it still holds it). The
 * ledger writes the batch only after the log's append is durable, so the read model is never
 * ahead of the log; a crash in between leaves it behind, and the next open catches up.
 *
 * The batches are not synced. A process that dies loses a suffix of them, which the checkpoint
 * says how to catch up. A power loss can lose any of the pages LevelDB had not synced, a
 * middle one with later ones kept: LevelDB would then drop the batches in the lost block and
 * keep a later checkpoint, rows missing under a checkpoint that says they are there. So the
 * folder is looked at before LevelDB opens it, and a write-ahead log with a hole (bytes that do
 * not read with a batch after them, or batches whose sequence numbers do not follow) is damage.
 *
 * A build or a catch-up longer than one batch marks the read model `building` in its first batch
 * and clears the mark with the checkpoint in its last; a crash in between leaves the mark, and the
 * next open rebuilds.
 *
 * ## When it is rebuilt
 *
 * At open, from the log's start: when the read model is new (built), when its schema version is
 * not this code's, when a build did not finish, when the log does not hold the checkpoint's
 * point any more (it is shorter, or holds another record there: not the log it indexed), and
 * when it is damaged: its folder's files (as for a `level:` ledger: `CURRENT` lost, a manifest or
 * table missing, a table whose blocks do not match their checksums, checked once per table and
 * again whenever the file is written, a write-ahead log with a hole), its checkpoint or counts
 * not matching their checksums, counts that do not add up to the checkpoint's position (each
 * record is one `decided`, `sent` or `failed`), or a row the catch-up reads. A damaged database
 * is discarded (its files deleted, the folder marked first, so that a crash in the middle is
 * finished by the next open) and built again. The ledger says so once, through its `onNotice`.
 * A row found damaged later, by an append or a query, stops the ledger ({@link IndexDamagedError})
 * and marks the folder, so that the next open rebuilds.
 *
 * A folder that holds anything else (files that are not LevelDB's, a `level:` ledger) is refused
 * and left as it is; one with LevelDB's files and no marker is adopted when it is a read model
 * of ledgerstore 0.1 (and rebuilt: schema 1), refused otherwise.
 *
 * @module
 */
import type { AbstractSublevel } from 'abstract-level';
import { Decoder, Encoder } from 'cbor-x';
import { ClassicLevel } from 'classic-level';
import { crc32c, sealValue, unsealValue } from '../level-files.js';
import {
  type Marker,
  type TableStamp,
  discardDatabase,
  inspectFolder,
  levelFailure,
  makeFolder,
  peekDatabase,
  reserveFolder,
  verifyTables,
  withFolderLocked,
  writeMarker,
} from '../level-folder.js';
import { ForeignFolderError, IndexDamagedError, LedgerError, LedgerIoError, LevelFolderDamagedError } from '../errors.js';
import type { ResumePoint } from '../log.js';
import type { Conclusion, Decision } from './projection.js';
import { type Action, type Counts, type Item, type Record, WORKSPACES, type Workspace, itemKey } from './record.js';
import { type ItemState, refusal, stateAfter } from './rules.js';
import type { LedgerState, OutboxCursor, OutboxPage } from './state.js';

/** The version of the layout above. A read model of another version is rebuilt. */
export const SCHEMA = 2;

/** Records staged before a catch-up writes them as one batch. */
const BATCH = 10_000;
/** Item rows kept in memory between batches of a catch-up: most `sent` records follow soon after their `decided`. */
const CACHE = 100_000;

type Bytes = Uint8Array;
type Db = ClassicLevel<Bytes, Bytes>;
type Sub = AbstractSublevel<Db, string | Buffer | Uint8Array, Bytes, Bytes>;

const encoder = new Encoder({ useRecords: false, variableMapSize: true, tagUint8Array: false });
const decoder = new Decoder({ useRecords: false, mapsAsObjects: true });
const cbor = (value: unknown): Bytes => encoder.encode(value);
const uncbor = <T>(bytes: Bytes): T => decoder.decode(bytes) as T;
const utf8 = (text: string): Bytes => Buffer.from(text, 'utf8');

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
type StackOp = [op: 'c' | 'u', workspace: Workspace, text: string];

/** An item's row: its place in decision order, its state, a sent item's ids, the stack its `sent` changes. */
type Row = [seq: number, state: 'w' | 's' | 'f' | 'k', ids: readonly string[] | null, stack: StackOp | null];

function stackOpOf(action: Action): StackOp | null {
  if (action.type === 'conclude') return ['c', action.workspace, action.text];
  if (action.type === 'unconclude') return ['u', action.workspace, action.text];
  return null;
}

const STATE_OF: { readonly [code in Row[1]]: ItemState } = { w: 'waiting', s: 'sent', f: 'failed', k: 'skipped' };
const CODE_OF: { readonly [state in ItemState]: Row[1] } = { waiting: 'w', sent: 's', failed: 'f', skipped: 'k' };

function seqKey(seq: number): Bytes {
  const key = Buffer.allocUnsafe(8);
  key.writeUIntBE(0, 0, 2);
  key.writeUIntBE(seq, 2, 6);
  return key;
}

function seqOf(key: Bytes): number {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUIntBE(2, 6);
}

/** The prefix of a conclusion stack's keys: workspace, text length, text. */
function stackPrefix(workspace: Workspace, text: string): Buffer {
  const body = utf8(text);
  const prefix = Buffer.allocUnsafe(5 + body.length);
  prefix[0] = WORKSPACES.indexOf(workspace);
  prefix.writeUInt32BE(body.length, 1);
  prefix.set(body, 5);
  return prefix;
}

/** The first key after every key that starts with `prefix`. */
function after(prefix: Bytes): Bytes {
  const end = Buffer.from(prefix);
  for (let n = end.length - 1; n >= 0; n--) {
    if ((end[n] as number) < 0xff) {
      end[n] = (end[n] as number) + 1;
      return end.subarray(0, n + 1);
    }
  }
  return Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
}

interface Totals {
  decided: number;
  sent: number;
  waiting: number;
  failed: number;
  skipped: number;
  /** Conclusions pushed so far: the next push's number. */
  pushes: number;
}

const NO_TOTALS: Totals = { decided: 0, sent: 0, waiting: 0, failed: 0, skipped: 0, pushes: 0 };

/** What the marker file of a read model's folder says (see `lib/level-folder.ts`). */
const MODEL_MARKER: Marker = { format: 'ledgerstore/read-model', schema: SCHEMA };

/**
 * The read model's LevelDB database and its sublevels, and each row's checksum: a row is its
 * CBOR, then the CRC-32C of its whole key (the sublevel's prefix, then its own) and its CBOR, as a
 * CBOR byte string of 4 bytes. A reset replaces the database, and so the store.
 */
class Store {
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
const isCorruption = (e: unknown): boolean =>
  (e as { code?: unknown } | null)?.code === 'LEVEL_CORRUPTION' || ((e as { cause?: { code?: unknown } } | null)?.cause?.code === 'LEVEL_CORRUPTION');

/**
 * Makes the folder ready for LevelDB: looks at it, refuses it when it is not a read model's,
 * discards a damaged one (first marking the folder, so that a crash in the middle is known for
 * one), adopts a folder of ledgerstore 0.1. Gives why it discarded a database, if it did, and
 * whether LevelDB is to create one. The caller holds the folder's lock.
 */
async function prepareModelFolder(folder: string): Promise<{ readonly discarded: string | null; readonly create: boolean }> {
  const found = inspectFolder(folder, MODEL_MARKER.format);
  if (found.state === 'foreign') throw new ForeignFolderError(folder, found.why);
  if (found.state === 'missing') makeFolder(folder);
  if (found.state === 'missing' || found.state === 'empty') {
    if (found.state === 'missing' || found.marker === null || found.marker['discard'] !== undefined) writeMarker(folder, MODEL_MARKER);
    return { discarded: null, create: true };
  }
  // Without the marker, the folder cannot be told for a read model's: left as it is.
  if (found.marker === null && found.state === 'damaged') throw new LevelFolderDamagedError(folder, found.file, found.why);
  let why: string | null = found.state === 'damaged' ? found.why : null;
  if (found.state === 'database' && found.marker === null) {
    const holds = await peekDatabase(folder, found.live, (e) => new LedgerIoError(folder, e), async (db) => {
      if ((await db.get(Uint8Array.of(0x00, ...Buffer.from('format', 'ascii')))) !== undefined) return 'a log';
      if ((await db.keys({ limit: 1 }).all()).length === 0) return 'nothing';
      const meta = await db.getMany(['!meta!totals', '!meta!checkpoint'].map(utf8));
      return meta.some((value) => value !== undefined) ? 'an old read model' : 'other keys';
    });
    if (holds === 'a log') throw new ForeignFolderError(folder, 'it holds a LevelDB ledger (a log) of ledgerstore 0.1, not a read model (an index)');
    if (holds === 'other keys') throw new ForeignFolderError(folder, 'it holds a LevelDB database whose keys are not a read model\'s (another program\'s database)');
    if (holds === 'an old read model') why = `it is of schema version 1 (ledgerstore 0.1), and this ledgerstore reads version ${SCHEMA}`;
    writeMarker(folder, MODEL_MARKER); // adopted
  }
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

/** Throws the database away, the folder marked first (synced) with why, so that a crash in the middle is finished by the next open. The caller holds the folder's lock. */
function discard(folder: string, why: string): void {
  writeMarker(folder, { ...MODEL_MARKER, discard: why });
  discardDatabase(folder);
}

/** The read model of one ledger, open. */
export class ReadModel implements LedgerState {
  /** Item rows recently read or written, so that a catch-up seldom asks LevelDB. */
  private readonly cache = new RowCache(CACHE);
  /** The batches started and not known to be written yet (the last one waits for those before it). */
  private writing: Promise<void> | null = null;
  /** Set once a read found the rows damaged: nothing more is read or written. */
  private damage: IndexDamagedError | null = null;
  /** The checkpoint at open, and what the rows hold now. */
  private checkpointNow: Checkpoint | null = null;
  private building = false;
  private schema: number | null = null;
  private totals: Totals = { ...NO_TOTALS };
  /** Why the rows cannot be trusted as they were found at open (damage), or `null`. */
  private distrust: string | null;

  private constructor(
    readonly folder: string,
    private store: Store,
    /** Gives the folder back to other opens of this process, at close. */
    private readonly release: () => void,
    distrust: string | null,
  ) {
    this.distrust = distrust;
  }

  /**
   * Opens (creating it if missing) the read model in `folder`. A read model found damaged (its
   * files, its checkpoint, its counts) is discarded here or reported by {@link rebuildReason},
   * for the ledger to rebuild it from the log and say why.
   * @throws {@link LockedError} when another process (or open) has it
   * @throws {@link ForeignFolderError} when the folder holds anything but a read model
   * @throws {@link LevelFolderDamagedError} when it is damaged and not marked as a read model's
   * @throws {@link LedgerIoError} when it cannot be opened
   */
  static async open(folder: string): Promise<ReadModel> {
    const release = reserveFolder(folder, 'index');
    try {
      const prepared = await withFolderLocked(folder, 'index', false, () => prepareModelFolder(folder));
      let discarded = prepared.discarded;
      let db: Db;
      try {
        db = await openStore(folder, prepared.create);
      } catch (e) {
        if (!(e instanceof LevelFolderDamagedError)) throw e;
        // damage that only LevelDB's open saw: thrown away as what the look saw
        discarded = e.why;
        await withFolderLocked(folder, 'index', false, () => discard(folder, e.why));
        db = await openStore(folder, true);
      }
      if (discarded !== null) writeMarker(folder, MODEL_MARKER); // a new database is there
      const model = new ReadModel(folder, new Store(db), release, discarded === null ? null : `${discarded}; it was discarded`);
      try {
        await model.readMeta();
      } catch (e) {
        await db.close().catch(() => undefined);
        throw e;
      }
      return model;
    } catch (e) {
      release();
      throw e;
    }
  }

  /** Reads the checkpoint, the totals and the building mark; damage in them is a reason to rebuild. */
  private async readMeta(): Promise<void> {
    const { meta } = this.store;
    const names = ['checkpoint', 'totals', 'building'].map(utf8);
    let found: (Bytes | undefined)[];
    try {
      found = await meta.getMany(names);
    } catch (e) {
      if (!isCorruption(e)) throw new LedgerIoError(this.folder, e);
      this.distrust ??= `LevelDB finds it damaged (${(e as Error).message})`;
      return;
    }
    const [checkpointBytes, totalsBytes, buildingBytes] = found;
    const checkpoint = checkpointBytes === undefined ? null : this.store.unseal<Checkpoint>(meta, names[0] as Bytes, checkpointBytes);
    const totals = totalsBytes === undefined ? [] : this.store.unseal<number[]>(meta, names[1] as Bytes, totalsBytes);
    if (checkpoint === null && checkpointBytes !== undefined || totals === null || (buildingBytes !== undefined && this.store.unseal(meta, names[2] as Bytes, buildingBytes) === null)) {
      this.distrust ??= 'its checkpoint or counts do not match their checksums';
      return;
    }
    this.checkpointNow = checkpoint;
    this.schema = checkpoint?.schema ?? null;
    this.building = buildingBytes !== undefined;
    this.totals = totalsFrom(totals);
    const t = this.totals;
    if (checkpoint !== null && !this.building && checkpoint.schema === SCHEMA && checkpoint.resume.position !== t.decided + t.sent + t.failed) {
      // every record is one decided, sent or failed: the rows and the checkpoint disagree
      this.distrust ??= `its counts (${t.decided} decided, ${t.sent} sent, ${t.failed} failed) do not add up to its checkpoint's ${checkpoint.resume.position} records`;
    }
  }

  /** The checkpoint the rows are at, or `null` when there is none (a new or unfinished read model). */
  get checkpoint(): Checkpoint | null {
    return this.building || this.distrust !== null ? null : this.checkpointNow;
  }

  /** Why the rows cannot be caught up and must be rebuilt from the log, or `null` when they can. */
  get rebuildReason(): string | null {
    if (this.distrust !== null) return this.distrust;
    if (this.building) return 'an earlier build did not finish';
    if (this.checkpointNow === null) return this.totals.decided > 0 ? 'it has no checkpoint' : null;
    if (this.schema !== SCHEMA) return `it is of schema version ${String(this.schema)}, and this ledgerstore reads version ${SCHEMA}`;
    return null;
  }

  /** Whether it holds nothing yet. */
  get isNew(): boolean {
    return this.checkpointNow === null && !this.building && this.totals.decided === 0 && this.distrust === null;
  }

  status(): IndexStatus {
    return { folder: this.folder, schema: this.schema, checkpoint: this.checkpoint, building: this.building || this.distrust !== null, counts: countsOf(this.totals) };
  }

  /**
   * Deletes every row and the checkpoint, for a rebuild from the log's start. Safe to stop at any
   * point: the folder's marker says first (synced) that its database is being discarded, so that
   * an open after a crash in the middle discards what is left and builds again; then LevelDB's
   * files are deleted and a new database is made; then the marker is cleared.
   */
  async reset(): Promise<void> {
    await this.settle().catch(() => undefined); // the rows are being thrown away
    try {
      await this.store.db.close();
    } catch (e) {
      throw new LedgerIoError(this.folder, e);
    }
    // marked before anything is deleted: from then on the rows are never trusted, whatever stops this
    await withFolderLocked(this.folder, 'index', false, () => discard(this.folder, 'a rebuild from the log did not finish'));
    this.store = new Store(await openStore(this.folder, true));
    writeMarker(this.folder, MODEL_MARKER);
    this.cache.clear();
    this.checkpointNow = null;
    this.building = false;
    this.schema = null;
    this.totals = { ...NO_TOTALS };
    this.distrust = null;
    this.damage = null;
  }

  /**
   * A catch-up: records the log replays at open, from the checkpoint (or from the start after a
   * reset), checked against the rules and staged; written a batch at a time, the checkpoint last.
   */
  catchUp(log: string): CatchUp {
    return new CatchUp(this, log);
  }

  // -- damage ---------------------------------------------------------------------------------

  /**
   * The read model is damaged: marks its folder (synced) so that the next open discards it and
   * builds it again, and from now on refuses every read and write. Gives the error to throw.
   */
  private damaged(why: string, cause?: unknown): IndexDamagedError {
    if (this.damage !== null) return this.damage;
    this.damage = new IndexDamagedError(this.folder, why, cause === undefined ? undefined : { cause });
    try {
      writeMarker(this.folder, { ...MODEL_MARKER, discard: why });
    } catch {
      // the rows are refused from now on all the same; the next open finds the damage again
    }
    return this.damage;
  }

  /** A row's value, its checksum checked: damage when it does not match. */
  private unseal<T>(sub: Sub, key: Bytes, bytes: Bytes): T {
    const value = this.store.unseal<T>(sub, key, bytes);
    if (value === null) throw this.damaged(`a row of ${sub.prefix} does not match its checksum (key ${Buffer.from(key).toString('hex').slice(0, 64)})`);
    return value;
  }

  /** A failure of LevelDB's, as the read model's error: damage when LevelDB says so. */
  private failure(e: unknown): LedgerError {
    if (e instanceof LedgerError) return e;
    if (isCorruption(e)) return this.damaged(`LevelDB finds it damaged (${(e as Error).message})`, e);
    return new LedgerIoError(this.folder, e);
  }

  // -- the rows -------------------------------------------------------------------------------

  /**
   * The item's row: staged, cached, or read from LevelDB. `absent` (a build's filter of the
   * items it wrote) says for most items never decided that LevelDB need not be asked.
   */
  async rowOf(item: Item, stage?: Stage, absent?: (key: string) => boolean): Promise<Row | undefined> {
    if (this.damage !== null) throw this.damage;
    const key = itemKey(item);
    const staged = stage?.rows.get(key);
    if (staged !== undefined) return staged;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    if (absent?.(key) === true) return undefined;
    // A synchronous get: a row is a few dozen bytes, usually in LevelDB's block cache, and a
    // round trip through the thread pool would cost ten times the lookup.
    if (this.writing !== null) await this.settle();
    const { db, items } = this.store;
    const rowKey = utf8(key);
    let bytes: Bytes | undefined;
    try {
      bytes = db.getSync(items.prefixKey(rowKey, 'view'));
    } catch (e) {
      throw this.failure(e);
    }
    if (bytes === undefined) return undefined;
    const row = this.unseal<Row>(items, rowKey, bytes);
    this.cache.set(key, row);
    return row;
  }

  /** The key of the conclusion `depth` below the top of a stack (0: the top), as LevelDB holds it. */
  async stackEntry(prefix: Buffer, depth: number): Promise<Bytes | undefined> {
    const { stacks } = this.store;
    const entries = await this.read(() => stacks.iterator({ gte: prefix, lt: after(prefix), reverse: true, limit: depth + 1 }).all());
    const entry = entries[depth];
    if (entry === undefined) return undefined;
    this.unseal(stacks, entry[0], entry[1]); // its value holds the key's checksum too
    return entry[0];
  }

  /** Writes a stage as one batch (see {@link submit}) and waits for it, and any before it. */
  async write(stage: Stage, checkpoint: Checkpoint | null, building: boolean): Promise<void> {
    this.submit(stage, checkpoint, building);
    await this.settle();
  }

  /**
   * Starts writing a stage's rows, the totals, and the checkpoint (or the `building` mark) as one
   * batch, after any batch started before it. What it holds is taken as written at once (later
   * stages read it from the cache; a read of LevelDB waits for the writes first), so that a
   * build stages its next batch while LevelDB writes this one. A failed write fails every later
   * read and write: the read model must then be reopened.
   *
   * The keys carry their sublevel's prefix already: a chained batch given a `sublevel` option
   * per operation spends more on the options than on the write.
   */
  submit(stage: Stage, checkpoint: Checkpoint | null, building: boolean): void {
    if (this.damage !== null) throw this.damage;
    const store = this.store;
    const batch = store.db.batch();
    const put = (sub: Sub, key: Bytes, value: unknown): void => void batch.put(sub.prefixKey(key, 'view'), store.seal(sub, key, value));
    const del = (sub: Sub, key: Bytes): void => void batch.del(sub.prefixKey(key, 'view'));
    for (const [key, row] of stage.rows) put(store.items, utf8(key), row);
    for (const [seq, decision] of stage.decided) put(store.decisions, seqKey(seq), decision);
    for (const [seq, decision] of stage.waiting) {
      if (decision === null) del(store.outbox, seqKey(seq));
      else put(store.outbox, seqKey(seq), decision);
    }
    for (const key of stage.unstacked) del(store.stacks, key);
    for (const [key, conclusion] of stage.stacked) put(store.stacks, key, conclusion);
    put(store.meta, utf8('totals'), totalsArray(stage.totals));
    if (checkpoint !== null) put(store.meta, utf8('checkpoint'), checkpoint);
    if (building) put(store.meta, utf8('building'), true);
    else del(store.meta, utf8('building'));
    for (const [key, row] of stage.rows) this.cache.set(key, row);
    this.totals = stage.totals;
    this.building = building;
    if (checkpoint !== null) {
      this.checkpointNow = checkpoint;
      this.schema = checkpoint.schema;
    }
    const before = this.writing;
    const writing = (async () => {
      await before;
      try {
        await batch.write();
      } catch (e) {
        throw this.failure(e);
      }
    })();
    writing.catch(() => undefined); // reported by the next settle
    this.writing = writing;
  }

  /** Waits for the batches started so far; rejects if one failed. */
  private async settle(): Promise<void> {
    const writing = this.writing;
    await writing;
    if (this.writing === writing) this.writing = null;
  }

  /** A stage for records that follow the rows as they are now. */
  stage(held: Map<string, Bytes[]> | null = null): Stage {
    return new Stage(this, { ...this.totals }, held);
  }

  private async read<T>(query: () => Promise<T>): Promise<T> {
    if (this.damage !== null) throw this.damage;
    await this.settle();
    try {
      return await query();
    } catch (e) {
      throw this.failure(e);
    }
  }

  // -- LedgerState ----------------------------------------------------------------------------

  async statesOf(items: readonly Item[]): Promise<(ItemState | undefined)[]> {
    if (this.damage !== null) throw this.damage;
    const keys = items.map(itemKey);
    const rows: (Row | undefined)[] = keys.map((key) => this.cache.get(key));
    const missing = rows.flatMap((row, n) => (row === undefined ? [n] : []));
    if (missing.length > 0) {
      const sub = this.store.items;
      const rowKeys = missing.map((n) => utf8(keys[n] as string));
      const found = await this.read(() => sub.getMany(rowKeys));
      found.forEach((bytes, m) => {
        if (bytes === undefined) return;
        const n = missing[m] as number;
        const row = this.unseal<Row>(sub, rowKeys[m] as Bytes, bytes);
        rows[n] = row;
        // kept, as rowOf keeps what it reads: the append that asked applies these items next
        this.cache.set(keys[n] as string, row);
      });
    }
    return rows.map((row) => (row === undefined ? undefined : STATE_OF[row[1]]));
  }

  async apply(records: readonly Record[], point: () => Promise<ResumePoint>): Promise<void> {
    const stage = this.stage();
    for (const record of records) await stage.add(record);
    await this.write(stage, { schema: SCHEMA, resume: await point(), log: this.checkpointNow?.log ?? '' }, false);
  }

  async isDecided(item: Item): Promise<boolean> {
    return (await this.rowOf(item)) !== undefined;
  }

  /** An outbox or decisions row as a decision, its checksum checked. */
  private decisionOf(sub: Sub, [key, bytes]: [Bytes, Bytes]): Decision {
    return decisionFrom(this.unseal<[Item, Action]>(sub, key, bytes));
  }

  async outbox(): Promise<Decision[]> {
    const sub = this.store.outbox;
    const entries = await this.read(() => sub.iterator().all());
    return entries.map((entry) => this.decisionOf(sub, entry));
  }

  async outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage> {
    const sub = this.store.outbox;
    const range = after === undefined ? {} : { gt: seqKey(after) };
    const entries = await this.read(() => sub.iterator({ ...range, limit: limit + 1 }).all());
    const page = entries.slice(0, limit);
    const last = page[page.length - 1];
    return {
      decisions: page.map((entry) => this.decisionOf(sub, entry)),
      next: entries.length > limit && last !== undefined ? seqOf(last[0]) : null,
    };
  }

  async sentIds(item: Item): Promise<readonly string[] | null> {
    const row = await this.rowOf(item);
    return row === undefined ? null : row[2];
  }

  async conclusion(workspace: Workspace, text: string): Promise<Conclusion | null> {
    const sub = this.store.stacks;
    const prefix = stackPrefix(workspace, text);
    const top = await this.read(() => sub.iterator({ gte: prefix, lt: after(prefix), reverse: true, limit: 1 }).all());
    if (top[0] === undefined) return null;
    const [item, id] = this.unseal<[Item, string]>(sub, top[0][0], top[0][1]);
    return { item, id };
  }

  async counts(): Promise<Counts> {
    if (this.damage !== null) throw this.damage;
    return countsOf(this.totals);
  }

  async *decisions(): AsyncIterable<Decision> {
    const sub = this.store.decisions;
    const iterator = sub.iterator();
    try {
      for (;;) {
        const chunk = await this.read(() => iterator.nextv(1000));
        if (chunk.length === 0) return;
        for (const entry of chunk) yield this.decisionOf(sub, entry);
      }
    } finally {
      await iterator.close();
    }
  }

  async close(): Promise<void> {
    await this.settle().catch(() => undefined); // a failed write was reported where it mattered
    try {
      await this.store.db.close();
    } catch (e) {
      throw new LedgerIoError(this.folder, e);
    } finally {
      this.release();
    }
  }
}

/** Opens (or, when `create`, creates) the read model's database in its folder. */
async function openStore(folder: string, create: boolean): Promise<Db> {
  const db: Db = new ClassicLevel<Bytes, Bytes>(folder, { keyEncoding: 'view', valueEncoding: 'view' });
  try {
    await db.open({ createIfMissing: create });
  } catch (e) {
    throw levelFailure(folder, e, 'index');
  }
  return db;
}

function decisionFrom([item, action]: [Item, Action]): Decision {
  return { item, action };
}

function totalsFrom(values: number[]): Totals {
  const [decided = 0, sent = 0, waiting = 0, failed = 0, skipped = 0, pushes = 0] = values;
  return { decided, sent, waiting, failed, skipped, pushes };
}

function totalsArray(t: Totals): number[] {
  return [t.decided, t.sent, t.waiting, t.failed, t.skipped, t.pushes];
}

function countsOf(t: Totals): Counts {
  return { decided: t.decided, sent: t.sent, waiting: t.waiting, failed: t.failed, skipped: t.skipped };
}

/**
 * Changes to the rows, in memory, for records in log order, until they are written as one batch:
 * what a later record of the same batch reads sees what an earlier one changed.
 */
export class Stage {
  readonly rows = new Map<string, Row>();
  readonly decided = new Map<number, [Item, Action]>();
  /** Outbox rows to put (`[item, action]`) or delete (`null`), by seq. */
  readonly waiting = new Map<number, [Item, Action] | null>();
  /** Conclusions pushed in this stage and still on their stack, by key. */
  readonly stacked = new Map<Bytes, [Item, string]>();
  /** Conclusions held by LevelDB and taken off their stack in this stage. */
  readonly unstacked: Bytes[] = [];
  /** Per stack (prefix, as hex): the keys pushed in this stage, in order, and how many of LevelDB's were taken off. */
  private readonly stackState = new Map<string, { pushed: Bytes[]; removed: number }>();
  /** How many records are staged. */
  size = 0;

  constructor(
    private readonly model: ReadModel,
    readonly totals: Totals,
    /**
     * In a build from empty, every stack's keys as LevelDB holds them (the build wrote them
     * all), so that an undo need not ask LevelDB; `null` otherwise.
     */
    private readonly held: Map<string, Bytes[]> | null = null,
  ) {}

  /** The item's state as the staged records leave it. */
  async stateOf(item: Item, absent?: (key: string) => boolean): Promise<ItemState | undefined> {
    const row = await this.model.rowOf(item, this, absent);
    return row === undefined ? undefined : STATE_OF[row[1]];
  }

  /** Stages a record that the rules allow (the caller checked it). */
  async add(record: Record): Promise<void> {
    const t = this.totals;
    const key = itemKey(record.item);
    this.size++;
    if (record.type === 'decided') {
      const seq = t.decided++;
      const state = stateAfter(record);
      this.rows.set(key, [seq, CODE_OF[state], null, stackOpOf(record.action)]);
      this.decided.set(seq, [record.item, record.action]);
      if (state === 'waiting') {
        t.waiting++;
        this.waiting.set(seq, [record.item, record.action]);
      } else {
        t.skipped++;
      }
      return;
    }
    const row = (await this.model.rowOf(record.item, this)) as Row;
    const [seq, , , stack] = row;
    t.waiting--;
    this.waiting.set(seq, null);
    if (record.type === 'failed') {
      t.failed++;
      this.rows.set(key, [seq, 'f', null, stack]);
      return;
    }
    t.sent++;
    this.rows.set(key, [seq, 's', record.ids, stack]);
    if (stack === null) return;
    const [op, workspace, text] = stack;
    if (op === 'c') {
      const id = record.ids[0];
      if (id !== undefined) this.push(stackPrefix(workspace, text), [record.item, id]);
    } else {
      await this.pop(stackPrefix(workspace, text));
    }
  }

  private stackOf(prefix: Buffer): { pushed: Bytes[]; removed: number } {
    const id = prefix.toString('hex');
    let state = this.stackState.get(id);
    if (state === undefined) this.stackState.set(id, (state = { pushed: [], removed: 0 }));
    return state;
  }

  private push(prefix: Buffer, conclusion: [Item, string]): void {
    const key = Buffer.concat([prefix, seqKey(this.totals.pushes++)]);
    this.stackOf(prefix).pushed.push(key);
    this.stacked.set(key, conclusion);
  }

  private async pop(prefix: Buffer): Promise<void> {
    const state = this.stackOf(prefix);
    const staged = state.pushed.pop();
    if (staged !== undefined) {
      this.stacked.delete(staged);
      return;
    }
    const keys = this.held?.get(prefix.toString('hex'));
    const held = this.held === null ? await this.model.stackEntry(prefix, state.removed) : keys?.[keys.length - 1 - state.removed];
    if (held === undefined) return; // an undo of an empty stack takes nothing off
    state.removed++;
    this.unstacked.push(held);
  }

  /** Brings `held` (see the constructor) up to date once this stage is written. */
  written(): void {
    if (this.held === null) return;
    for (const [id, { pushed, removed }] of this.stackState) {
      const keys = this.held.get(id) ?? [];
      keys.length -= removed;
      keys.push(...pushed);
      if (keys.length === 0) this.held.delete(id);
      else this.held.set(id, keys);
    }
  }
}

/**
 * The records a log replays into the read model at open: each checked against the rules and
 * staged, written a batch at a time (the first of several marks the read model `building`), the
 * checkpoint with the last.
 */
export class CatchUp {
  private stage: Stage;
  private wroteAny = false;
  /**
   * In a build from empty, every item with a row was written by this build: a filter of their
   * keys says of most undecided items that LevelDB need not be asked. `null` in a catch-up.
   */
  private readonly written: BloomFilter | null;
  private readonly absent: ((key: string) => boolean) | undefined;
  /** In a build from empty, the keys of every stack (see {@link Stage}); `null` in a catch-up. */
  private readonly held: Map<string, Bytes[]> | null;
  /** How many records it took in. */
  count = 0;

  constructor(
    private readonly model: ReadModel,
    private readonly log: string,
  ) {
    this.written = model.isNew ? new BloomFilter() : null;
    this.held = model.isNew ? new Map() : null;
    this.stage = model.stage(this.held);
    const written = this.written;
    this.absent = written === null ? undefined : (key) => !written.has(key);
  }

  /** Checks and stages one record (the log's `replay`). */
  async replay(record: Record): Promise<void> {
    const refused = refusal(record, await this.stage.stateOf(record.item, this.absent));
    if (refused !== null) throw refused;
    if (record.type === 'decided') this.written?.add(itemKey(record.item));
    await this.stage.add(record);
    this.count++;
    if (this.stage.size >= BATCH) {
      this.model.submit(this.stage, null, true);
      this.stage.written();
      this.wroteAny = true;
      this.stage = this.model.stage(this.held);
    }
  }

  /** Writes what is staged with the checkpoint at `point`, where the log now is. */
  async finish(point: ResumePoint): Promise<void> {
    if (this.stage.size === 0 && !this.wroteAny && this.model.checkpoint !== null && samePoint(this.model.checkpoint.resume, point)) return;
    await this.model.write(this.stage, { schema: SCHEMA, resume: point, log: this.log }, false);
  }
}

function samePoint(a: ResumePoint, b: ResumePoint): boolean {
  return a.position === b.position && a.fingerprint === b.fingerprint && JSON.stringify(a.cursor) === JSON.stringify(b.cursor);
}

/**
 * The rows seen last, at least `size / 2` and at most `size` of them: two generations, the
 * younger replacing the older when it is full. (Evicting a Map's oldest entry one at a time
 * makes V8 skip ever more deleted entries to find it.)
 */
class RowCache {
  private young = new Map<string, Row>();
  private old = new Map<string, Row>();
  constructor(private readonly size: number) {}

  get(key: string): Row | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: string, row: Row): void {
    if (this.young.size >= this.size / 2) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, row);
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}

/**
 * A Bloom filter of strings: `has` is never wrong when it says no, and says yes of a string it
 * was not given about 2% of the time with 5 million strings in it (2^26 bits, 8 MiB, 3 hashes).
 */
class BloomFilter {
  private static readonly BITS = 1 << 26;
  private readonly bits = new Uint8Array(BloomFilter.BITS / 8);

  add(key: string): void {
    const [h1, h2] = hashes(key);
    for (let k = 0; k < 3; k++) {
      const bit = (h1 + k * h2) & (BloomFilter.BITS - 1);
      this.bits[bit >>> 3] = (this.bits[bit >>> 3] as number) | (1 << (bit & 7));
    }
  }

  has(key: string): boolean {
    const [h1, h2] = hashes(key);
    for (let k = 0; k < 3; k++) {
      const bit = (h1 + k * h2) & (BloomFilter.BITS - 1);
      if (((this.bits[bit >>> 3] as number) & (1 << (bit & 7))) === 0) return false;
    }
    return true;
  }
}

/** Two 32-bit FNV-1a hashes of `key`'s UTF-16 code units, with different offsets, for double hashing. */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let n = 0; n < key.length; n++) {
    const c = key.charCodeAt(n);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return [a >>> 0, (b >>> 0) | 1];
}
