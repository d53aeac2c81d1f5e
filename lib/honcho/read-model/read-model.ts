/**
 * The read model: a ledger's state kept in LevelDB (classic-level, in a folder of its own), so
 * that an open reads only the records appended since its checkpoint, and queries are answered
 * from LevelDB rather than from a copy of the whole ledger in memory. The log stays the truth:
 * the read model is derived, can be deleted at any time, and is rebuilt from the log.
 *
 * The rows and their layout are `layout.ts`; the folder, `folder.ts`; what a batch of records
 * changes, `stage.ts`; the catch-up at open, `catch-up.ts`.
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
 * Longer than most files, and earned: one class, the read model's queries and batches, and this
 * doc of its promises.
 *
 * @module
 */
import { IndexDamagedError, LedgerError, LedgerIoError, LevelFolderDamagedError } from '../../errors.js';
import { levelFailure, levelFolder, reserveFolder, withFolderLocked, writeMarker } from '../../level-folder.js';
import type { ResumePoint } from '../../log.js';
import type { Conclusion, Decision } from '../projection.js';
import { type Action, type Counts, type Item, itemKey, type Record, type Workspace } from '../record.js';
import type { ItemState } from '../rules.js';
import type { LedgerState, OutboxCursor, OutboxPage } from '../state.js';
import { RowCache } from './caches.js';
import { discard, openStore, prepareModelFolder } from './folder.js';
import {
  after,
  type Bytes,
  CACHE,
  type Checkpoint,
  countsOf,
  type Db,
  decisionFrom,
  type IndexStatus,
  isCorruption,
  MODEL_MARKER,
  NO_TOTALS,
  type Row,
  SCHEMA,
  STATE_OF,
  Store,
  type Sub,
  seqKey,
  seqOf,
  stackPrefix,
  type Totals,
  totalsArray,
  totalsFrom,
  utf8,
  VIEW,
} from './layout.js';
import { type RowSource, Stage } from './stage.js';

export { type Checkpoint, type Db as IndexDatabase, type IndexStatus, SCHEMA } from './layout.js';

/** The read model of one ledger, open. */
export class ReadModel implements LedgerState, RowSource {
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
    /** The folder, or a database's name: for messages. */
    readonly folder: string,
    private store: Store,
    /** The folder it is in, `null` for a database the caller made (which it never closes). */
    private readonly inFolder: string | null,
    /** Gives the folder back to other opens of this process, at close. */
    private readonly release: () => void,
    distrust: string | null,
  ) {
    this.distrust = distrust;
  }

  /**
   * Opens the read model in `location`: a folder (created if missing), or an abstract-level
   * database the caller made (opened if it is not; never closed by the read model, which the
   * caller owns, as the LevelDB backend leaves a caller's database open). A read model found
   * damaged (its files, its checkpoint, its counts) is discarded here or reported by
   * {@link rebuildReason}, for the ledger to rebuild it from the log and say why.
   * @param name a database's name in messages (default: `index:` and its class's name)
   * @throws {@link LockedError} when another process (or open) has the folder
   * @throws {@link ForeignFolderError} when the folder holds anything but a read model
   * @throws {@link LevelFolderDamagedError} when it is damaged and not marked as a read model's
   * @throws {@link LedgerIoError} when it cannot be opened
   */
  static async open(location: string | Db, name?: string): Promise<ReadModel> {
    if (typeof location !== 'string') {
      const label = name ?? `index:${location.constructor.name}`;
      try {
        await location.open();
      } catch (e) {
        throw levelFailure(label, e, 'index');
      }
      const model = new ReadModel(label, new Store(location), null, () => undefined, null);
      await model.readMeta();
      return model;
    }
    const folder = location;
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
      const model = new ReadModel(
        folder,
        new Store(db),
        folder,
        release,
        discarded === null ? null : `${discarded}; it was discarded`,
      );
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
    const checkpoint =
      checkpointBytes === undefined ? null : this.store.unseal<Checkpoint>(meta, names[0] as Bytes, checkpointBytes);
    const totals = totalsBytes === undefined ? [] : this.store.unseal<number[]>(meta, names[1] as Bytes, totalsBytes);
    if (
      (checkpoint === null && checkpointBytes !== undefined) ||
      totals === null ||
      (buildingBytes !== undefined && this.store.unseal(meta, names[2] as Bytes, buildingBytes) === null)
    ) {
      this.distrust ??= 'its checkpoint or counts do not match their checksums';
      return;
    }
    this.checkpointNow = checkpoint;
    this.schema = checkpoint?.schema ?? null;
    this.building = buildingBytes !== undefined;
    this.totals = totalsFrom(totals);
    const t = this.totals;
    if (
      checkpoint !== null &&
      !this.building &&
      checkpoint.schema === SCHEMA &&
      checkpoint.resume.position !== t.decided + t.sent + t.failed
    ) {
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
    if (this.schema !== SCHEMA)
      return `it is of schema version ${String(this.schema)}, and this ledgerstore reads version ${SCHEMA}`;
    return null;
  }

  /** Whether it holds nothing yet. */
  get isNew(): boolean {
    return this.checkpointNow === null && !this.building && this.totals.decided === 0 && this.distrust === null;
  }

  status(): IndexStatus {
    return {
      folder: this.folder,
      schema: this.schema,
      checkpoint: this.checkpoint,
      building: this.building || this.distrust !== null,
      counts: countsOf(this.totals),
    };
  }

  /**
   * Deletes every row and the checkpoint, for a rebuild from the log's start. Safe to stop at any
   * point: the folder's marker says first (synced) that its database is being discarded, so that
   * an open after a crash in the middle discards what is left and builds again; then LevelDB's
   * files are deleted and a new database is made; then the marker is cleared.
   */
  async reset(): Promise<void> {
    await this.settle().catch(() => undefined); // the rows are being thrown away
    const folder = this.inFolder;
    if (folder === null) {
      // a caller's database: every key of it cleared, in one operation
      try {
        await this.store.db.clear();
      } catch (e) {
        throw this.failure(e);
      }
    } else {
      try {
        await this.store.db.close();
      } catch (e) {
        throw new LedgerIoError(folder, e);
      }
      // marked before anything is deleted: from then on the rows are never trusted, whatever stops this
      await withFolderLocked(folder, 'index', false, () => discard(folder, 'a rebuild from the log did not finish'));
      this.store = new Store(await openStore(folder, true));
      writeMarker(folder, MODEL_MARKER);
    }
    this.cache.clear();
    this.checkpointNow = null;
    this.building = false;
    this.schema = null;
    this.totals = { ...NO_TOTALS };
    this.distrust = null;
    this.damage = null;
  }

  // -- damage ---------------------------------------------------------------------------------

  /**
   * The read model is damaged: marks its folder (synced) so that the next open discards it and
   * builds it again, and from now on refuses every read and write. Gives the error to throw.
   */
  private damaged(why: string, cause?: unknown): IndexDamagedError {
    if (this.damage !== null) return this.damage;
    this.damage = new IndexDamagedError(this.folder, why, cause === undefined ? undefined : { cause });
    if (this.inFolder === null) return this.damage; // a caller's database: refused from now on
    try {
      writeMarker(this.inFolder, { ...MODEL_MARKER, discard: why });
    } catch {
      // the rows are refused from now on all the same; the next open finds the damage again
    }
    return this.damage;
  }

  /** A row's value, its checksum checked: damage when it does not match. */
  private unseal<T>(sub: Sub, key: Bytes, bytes: Bytes): T {
    const value = this.store.unseal<T>(sub, key, bytes);
    if (value === null)
      throw this.damaged(
        `a row of ${sub.prefix} does not match its checksum (key ${Buffer.from(key).toString('hex').slice(0, 64)})`,
      );
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
      bytes = db.getSync<Bytes, Bytes>(items.prefixKey(rowKey, 'view'), VIEW);
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
    const entries = await this.read(() =>
      stacks.iterator({ gte: prefix, lt: after(prefix), reverse: true, limit: depth + 1 }).all(),
    );
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
    const put = (sub: Sub, key: Bytes, value: unknown): void =>
      void batch.put<Bytes, Bytes>(sub.prefixKey(key, 'view'), store.seal(sub, key, value), VIEW);
    const del = (sub: Sub, key: Bytes): void => void batch.del<Bytes>(sub.prefixKey(key, 'view'), VIEW);
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
    if (this.inFolder === null) return; // a caller's database stays open
    try {
      await this.store.db.close();
    } catch (e) {
      throw new LedgerIoError(this.folder, e);
    } finally {
      this.release();
    }
  }
}

/**
 * Where the read model in `folder` stands, for `ledgerstore index status`: `missing` or `empty`
 * when there is none (and then nothing is opened or made: opening one would create it).
 */
export async function indexStatus(folder: string): Promise<IndexStatus | 'missing' | 'empty'> {
  const there = levelFolder(folder);
  if (there !== 'database') return there;
  const model = await ReadModel.open(folder);
  try {
    return model.status();
  } finally {
    await model.close();
  }
}

/** Empties the read model in `folder` (making one there if there is none), for a rebuild from the log's start. */
export async function resetIndex(folder: string): Promise<void> {
  const model = await ReadModel.open(folder);
  try {
    await model.reset();
  } finally {
    await model.close();
  }
}
