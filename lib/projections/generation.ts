/**
 * A generation: one set of rows of one projection, in one database (its keys are in `layout.ts`),
 * with its checkpoint. What `apply` changes is staged in memory, in log order, until it is written
 * as part of one batch with the checkpoint; what is staged or being written is read before
 * LevelDB, so that a record sees what the records before it left.
 *
 * @module
 */
import { RecordRefusedError } from '../errors.js';
import type { Position } from '../log.js';
import { KeyFilter, RowCache } from './caches.js';
import type { Bytes, Database, DbBatch } from './database.js';
import type { ProjectionDefinition, RangeOptions, RowReader, Rows } from './definition.js';
import { after, type Checkpoint, cbor, seal, unseal } from './layout.js';
import { RowBytes } from './row-bytes.js';

/** What a generation is for: answering (and kept up to date), being built, or taken over. */
export type Role = 'serving' | 'building' | 'retired';

/** A generation as the registry lists it. */
export interface GenerationEntry {
  /** `<projection>.<number>`: its keys start `!<id>!`. */
  readonly id: string;
  readonly projection: string;
  readonly version: number;
  /** The database it is in: a folder's (`db-1`), or `null` in a caller's database. */
  readonly db: string | null;
  readonly role: Role;
}

/** Rows of a generation kept in memory between batches, so that most reads never reach LevelDB. */
const CACHE = 65_536;

/** What a deleted row is staged as. */
const ABSENT: unique symbol = Symbol('absent');
type Value = unknown;

/**
 * The changes of some records, in memory, until they are written as one batch: each changed
 * row's new value (or {@link ABSENT}), the values themselves rather than an object a row, since a
 * build stages a few hundred thousand rows a batch and the garbage of one object each was most
 * of its collector's work.
 */
export class Stage {
  readonly rows = new Map<string, Value>();
  /**
   * The keys inserted in this stage ({@link Rows.insert}: the rows before it do not hold them),
   * so that deleting one again takes it out of the stage and nothing at all is written for it.
   */
  readonly inserted = new Set<string>();
  /** How many records it holds. */
  records = 0;
  /** Set when its batch is submitted: settles when it is written. */
  written: Promise<void> | null = null;
}

/**
 * Thrown by {@link Rows.refuse}: the record at `index` of the batch `apply` was given is refused.
 * The engine makes it damage at that record's line, or an append's refusal.
 */
export class BatchRefusal extends Error {
  constructor(
    readonly index: number,
    readonly refusal: RecordRefusedError,
  ) {
    super(refusal.message, { cause: refusal });
  }
}

/** The names of what the engine keeps beside a generation's rows. */
const META = ['checkpoint', 'version', 'building'] as const;

/** One generation of one projection, open. */
export class Generation<R, Q extends object = object> {
  /** The start of every key of it. */
  readonly prefix: Buffer;
  private readonly rowBytes: RowBytes;
  private stage = new Stage();
  /** Stages submitted and not known to be written yet, oldest first. */
  private readonly pending: Stage[] = [];
  private readonly cache = new RowCache<Value>(CACHE);
  /** For rows built from nothing in this process: every key it may hold (see {@link startEmpty}). */
  private filter: KeyFilter | null = null;
  /** What its rows are at, as read at open and as written since. */
  checkpoint: Checkpoint | null = null;
  storedVersion: number | null = null;
  building = false;
  /** Why its rows cannot be used as they were found at open, or `null`. */
  distrust: string | null = null;
  private made: Q | null = null;

  /** `apply`'s view of the rows: the current stage over everything before it. */
  readonly rows: Rows;
  /** The queries' view: what every batch applied so far left. */
  readonly reader: RowReader;

  constructor(
    readonly entry: GenerationEntry,
    readonly definition: ProjectionDefinition<R, Q>,
    readonly db: Database,
  ) {
    this.prefix = Buffer.from(`!${entry.id}!`, 'utf8');
    this.rowBytes = new RowBytes(Buffer.concat([this.prefix, Buffer.from('r')]));
    this.rows = {
      get: <T>(key: string): T | undefined => {
        const value = this.lookup(key);
        return value === ABSENT ? undefined : (value as T);
      },
      put: (key, value) => this.change(key, value, false),
      insert: (key, value) => this.change(key, value, true),
      del: (key) => this.change(key, ABSENT, false),
      refuse: (index, why) => {
        throw new BatchRefusal(index, why);
      },
    };
    this.reader = {
      get: async <T>(key: string): Promise<T | undefined> => {
        const value = this.lookup(key);
        return value === ABSENT ? undefined : (value as T);
      },
      range: <T>(options: RangeOptions = {}) => this.range<T>(options),
    };
  }

  get id(): string {
    return this.entry.id;
  }

  /** Its queries, over its rows. */
  get queries(): Q {
    this.made ??= this.definition.queries(this.reader);
    return this.made;
  }

  /** Reads its checkpoint, version and building mark; what does not match its checksum is a reason not to use it. */
  load(): void {
    const [checkpoint, version, building] = META.map((name) => {
      const key = this.metaKey(name);
      const bytes = this.db.getSync(key);
      if (bytes === undefined) return undefined;
      const value = unseal<unknown>(key, bytes);
      if (value === null) this.distrust ??= 'its checkpoint does not match its checksum';
      return value ?? undefined;
    });
    this.checkpoint = (checkpoint as Checkpoint | undefined) ?? null;
    this.storedVersion = typeof version === 'number' ? version : null;
    this.building = building !== undefined;
  }

  /** For rows that start empty in this process: from now on a key it never wrote is known to be absent, without a read. */
  startEmpty(): void {
    this.filter = new KeyFilter();
    this.checkpoint = null;
    this.storedVersion = null;
    this.building = false;
    this.distrust = null;
  }

  /** Applies `records` (from position `first`) to the rows, staged. */
  apply(records: readonly R[], first: Position): void {
    this.definition.apply(records, this.rows, first);
    this.stage.records += records.length;
  }

  /**
   * Reads at once, into the cache, the rows `apply` will read for `records` (its definition's
   * `reads`) that nothing in memory holds. Not for rows built from nothing in this process,
   * whose filter answers most reads without LevelDB.
   */
  async prefetch(records: readonly R[]): Promise<void> {
    const reads = this.definition.reads;
    if (reads === undefined || this.filter !== null) return;
    const wanted = new Set<string>();
    for (const key of reads(records)) if (!this.inMemory(key)) wanted.add(key);
    if (wanted.size === 0) return;
    const keys = [...wanted];
    const rowKeys = keys.map((key) => this.rowKey(key));
    const values = await this.db.getMany(rowKeys);
    // no batch of these rows was in flight when they were asked for, so none can land meanwhile
    keys.forEach((key, n) => {
      const bytes = values[n];
      this.cache.set(key, bytes === undefined ? ABSENT : this.unsealRow(rowKeys[n] as Buffer, bytes));
    });
  }

  /** Whether the row is staged, being written or cached. */
  private inMemory(key: string): boolean {
    if (this.stage.rows.has(key)) return true;
    for (const stage of this.pending) if (stage.rows.has(key)) return true;
    return this.cache.get(key) !== undefined;
  }

  /** How many records are staged and not submitted. */
  get staged(): number {
    return this.stage.records;
  }

  /** Drops what is staged (a build given up before anything of it was written). */
  dropStaged(): void {
    this.stage = new Stage();
  }

  /**
   * Puts the staged rows into `batch`, with the version, the checkpoint (when given: the rows are
   * complete up to it) and the building mark (set: rows beyond the checkpoint are there, so they
   * must not be used until a later batch clears it). The stage counts as written from now on for
   * reads, until {@link written} is called.
   */
  fill(batch: DbBatch, checkpoint: Checkpoint | null, building: boolean): Stage {
    const stage = this.stage;
    this.stage = new Stage();
    const rowBytes = this.rowBytes;
    for (const [key, value] of stage.rows) {
      if (value === ABSENT) rowBytes.del(batch, key);
      else if (!rowBytes.putSimple(batch, key, value)) rowBytes.put(batch, key, cbor(value));
    }
    const meta = (name: (typeof META)[number], value: unknown): void => {
      const key = this.metaKey(name);
      batch.put(key, seal(key, cbor(value)));
    };
    meta('version', this.entry.version);
    if (checkpoint !== null) meta('checkpoint', checkpoint);
    if (building) meta('building', true);
    else batch.del(this.metaKey('building'));
    this.pending.push(stage);
    if (checkpoint !== null) this.checkpoint = checkpoint;
    this.storedVersion = this.entry.version;
    this.building = building;
    return stage;
  }

  /** A stage's batch was written: its rows are LevelDB's now (and cached). */
  written(stage: Stage): void {
    const at = this.pending.indexOf(stage);
    if (at !== -1) this.pending.splice(at, 1);
    this.cache.absorb(stage.rows);
  }

  /** Waits for the batches submitted so far; rejects if one failed. */
  async settled(): Promise<void> {
    for (const stage of [...this.pending]) await stage.written;
  }

  private change(key: string, value: Value, insert: boolean): void {
    const { rows, inserted } = this.stage;
    if (value === ABSENT) {
      // inserted in this stage: the rows before it do not hold it, so nothing is to be written
      if (inserted.delete(key)) rows.delete(key);
      else rows.set(key, ABSENT);
      return;
    }
    // every key put goes into the filter, even one deleted since: lookups trust it
    this.filter?.add(key);
    // a key staged already (deleted, or put) may be one the rows before the stage hold: an
    // insert after its delete is no first insert, and a delete after it must be written
    if (insert && !rows.has(key)) inserted.add(key);
    rows.set(key, value);
  }

  /** The row's value now: staged, being written, cached, or LevelDB's. */
  private lookup(key: string): Value {
    // first: a build's rows are mostly new keys, which the filter answers without a probe of
    // every stage in flight and of the cache (it holds every key staged, written or cached)
    if (this.filter !== null && !this.filter.has(key)) return ABSENT;
    const staged = this.stage.rows.get(key);
    if (staged !== undefined) return staged;
    for (let n = this.pending.length - 1; n >= 0; n--) {
      const written = (this.pending[n] as Stage).rows.get(key);
      if (written !== undefined) return written;
    }
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const rowKey = this.rowKey(key);
    const bytes = this.db.getSync(rowKey);
    const value = bytes === undefined ? ABSENT : this.unsealRow(rowKey, bytes);
    this.cache.set(key, value);
    return value;
  }

  private unsealRow(rowKey: Bytes, bytes: Bytes): Value {
    const value = unseal<Value>(rowKey, bytes, this.rowBytes.keyCrc(rowKey));
    if (value === null)
      throw this.db.markDamaged(
        `a row of ${this.id} does not match its checksum (key ${Buffer.from(rowKey).toString('hex').slice(0, 64)})`,
      );
    return value;
  }

  private rowKey(key: string): Buffer {
    return this.rowBytes.key(key);
  }

  private metaKey(name: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(`m${name}`, 'latin1')]);
  }

  /**
   * The bounds of a range of rows, as LevelDB keys: one lower and one upper bound, the tighter of
   * the prefix's and the caller's (LevelDB does not say which of `gt` and `gte` wins when both are given).
   */
  private bounds(options: RangeOptions): { gte?: Bytes; gt?: Bytes; lt?: Bytes; lte?: Bytes } {
    const key = (text: string): Buffer => this.rowKey(text);
    const base = options.prefix === undefined ? this.rowBytes.prefix : key(options.prefix);
    let lower: { key: Bytes; inclusive: boolean } = { key: base, inclusive: true };
    const raise = (bound: Bytes, inclusive: boolean): void => {
      const order = Buffer.compare(bound, lower.key);
      if (order > 0 || (order === 0 && !inclusive)) lower = { key: bound, inclusive };
    };
    if (options.gte !== undefined) raise(key(options.gte), true);
    if (options.gt !== undefined) raise(key(options.gt), false);
    let upper: { key: Bytes; inclusive: boolean } = { key: after(base), inclusive: false };
    const tighten = (bound: Bytes, inclusive: boolean): void => {
      const order = Buffer.compare(bound, upper.key);
      if (order < 0 || (order === 0 && !inclusive)) upper = { key: bound, inclusive };
    };
    if (options.lt !== undefined) tighten(key(options.lt), false);
    if (options.lte !== undefined) tighten(key(options.lte), true);
    return {
      ...(lower.inclusive ? { gte: lower.key } : { gt: lower.key }),
      ...(upper.inclusive ? { lte: upper.key } : { lt: upper.key }),
    };
  }

  private async *range<T>(options: RangeOptions): AsyncIterable<readonly [string, T]> {
    this.db.assertSound();
    await this.settled();
    const range = {
      ...this.bounds(options),
      reverse: options.reverse ?? false,
      ...(options.limit === undefined ? {} : { limit: options.limit }),
    };
    const iterator = this.db.iterator(range);
    try {
      for (;;) {
        const chunk = await iterator.next(64);
        if (chunk.length === 0) return;
        for (const [rowKey, bytes] of chunk) {
          const text = Buffer.from(rowKey.buffer, rowKey.byteOffset, rowKey.byteLength).toString(
            'utf8',
            this.rowBytes.prefix.length,
          );
          yield [text, this.unsealRow(rowKey, bytes) as T];
        }
      }
    } finally {
      await iterator.close();
    }
  }
}

/** A refusal as `apply` reports it: the index in its batch, and why (`null` index: it did not say which). */
export function refusalOf(e: unknown): { index: number | null; refusal: RecordRefusedError } | null {
  if (e instanceof BatchRefusal) return { index: e.index, refusal: e.refusal };
  if (e instanceof RecordRefusedError) return { index: null, refusal: e };
  return null;
}
