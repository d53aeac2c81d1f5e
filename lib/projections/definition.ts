/**
 * What a projection is, for whoever writes one: a named, versioned fold of a log's records into
 * rows of its own, with the queries that read them. The engine (`set.ts`) gives every projection
 * the same things for free: its rows in LevelDB, checkpointed in the same batch as the rows
 * change, caught up from the checkpoint at open, and built again from the log's start (in the
 * background, in a worker thread, while an older version or a state in memory answers) when its
 * version changes or its rows cannot be trusted.
 *
 * A projection knows nothing of LevelDB, checksums or checkpoints: `apply` changes rows through
 * {@link Rows}, queries read them through {@link RowReader}. The Honcho ledger's read model is
 * four of them (`lib/honcho/read-model/`); the example `examples/turns-per-session.ts` adds one.
 *
 * @module
 */
import type { RecordRefusedError } from '../errors.js';
import type { Position } from '../log.js';

/**
 * Something a worker thread can load by itself: a module's URL (`import.meta.url`) and the name
 * of one of its exports: the thing itself, or a function that gives it when called with `args`.
 */
export interface Loadable {
  readonly module: string;
  readonly export: string;
  /** Arguments for an export that is a function (JSON values: they are copied to the worker). */
  readonly args?: readonly unknown[];
}

/**
 * A projection's rows as `apply` changes them, in log order: what a record's `get` reads is what
 * the records before it left, this batch's included. Keys are strings, stored as their UTF-8
 * bytes and ordered by them; values are anything CBOR writes (numbers, strings, booleans, `null`,
 * arrays, plain objects, byte arrays).
 */
export interface Rows {
  /** The row's value, or `undefined` when there is none. What it gives must not be changed: put a new value. */
  get<T>(key: string): T | undefined;
  /** Sets the row. */
  put(key: string, value: unknown): void;
  /**
   * Sets a row the rows do not hold (a key never used before, such as one with a new sequence
   * number): the same as {@link Rows.put}, except that when it is deleted again within the same
   * batch, nothing at all is written for it.
   */
  insert(key: string, value: unknown): void;
  /** Deletes the row (nothing when there is none). */
  del(key: string): void;
  /**
   * Refuses the record at `index` of the batch `apply` was given, for `why`: read at open or in
   * a build, the log is damaged at that record's line; appended, the append is refused.
   */
  refuse(index: number, why: RecordRefusedError): never;
}

/** Which rows a range reads: by bounds, or every key that starts with `prefix`. */
export interface RangeOptions {
  readonly gt?: string;
  readonly gte?: string;
  readonly lt?: string;
  readonly lte?: string;
  /** Only keys that start with this (combined with the bounds). */
  readonly prefix?: string;
  /** Largest key first. */
  readonly reverse?: boolean;
  /** At most this many rows. */
  readonly limit?: number;
}

/**
 * A projection's rows as its queries read them: what every batch applied so far left (a query
 * never sees half a batch).
 */
export interface RowReader {
  get<T>(key: string): Promise<T | undefined>;
  /** The rows of a range, in key order (UTF-8 bytes), each with its key. */
  range<T>(options?: RangeOptions): AsyncIterable<readonly [key: string, value: T]>;
}

/**
 * A projection of a log of records `R`, answering queries `Q` (an object of functions, each
 * returning a promise).
 */
export interface ProjectionDefinition<R, Q extends object = object> {
  /** Its name: 1 to 64 of `a-z 0-9 -`, unique among the projections of a log. */
  readonly name: string;
  /**
   * Its version, a whole number from 1. Change it whenever `apply` writes other rows for the same
   * records (a new row, another layout, a fix): rows of another version are built again from the
   * log, in the background, and take over once they have caught up.
   */
  readonly version: number;
  /**
   * Changes the rows for `records`, the log's records from position `first`, in order. Called
   * for every record once, with the records of an append or a chunk of a build. May refuse a
   * record ({@link Rows.refuse}; the Honcho rules do): at open or in a build, that is damage at
   * the record's line, and the log is left as it was. `records` may be an array that its owner
   * (a caller of `ProjectionSet.apply`) changes once `apply` returns, or one `reads` was given
   * just before: what a definition keeps of a batch from one call to the next is to be checked
   * against the records themselves, never trusted by the array's identity alone (the Honcho
   * projections' batch keys, `keysOf`, are checked so).
   */
  apply(records: readonly R[], rows: Rows, first: Position): void;
  /**
   * The keys `apply` will read for `records` (a superset does no harm). Where the rows are
   * caught up from LevelDB (at open, after appends elsewhere), they are read at once before
   * `apply`, in one read of many keys rather than a point read a record. Absent, each is read
   * when `apply` asks for it.
   */
  reads?(records: readonly R[]): Iterable<string>;
  /** The queries, over rows that `apply` wrote. Called once for each set of rows. */
  queries(rows: RowReader): Q;
  /**
   * For a version that reads some rows as an older one wrote them: per query, the oldest
   * version whose rows it answers exactly as this version would. While this version is built,
   * rows of such a version (kept up to date by this version's `apply`, which must write what
   * those queries read as that version did) answer those queries; the others are answered from
   * the log replayed in memory. Absent, a query is answered only by rows of this version.
   */
  readonly answersSince?: { readonly [K in keyof Q]?: number };
  /**
   * A check of rows that read back whole against the records their checkpoint says they hold
   * (the Honcho counts must add up to it): why they disagree, or `null`. Checked at open; rows
   * that disagree are built again.
   */
  verify?(rows: RowReader, records: Position): Promise<string | null>;
  /**
   * Where a worker thread finds this definition (its module and export), so that it can be built
   * there while the ledger serves. Without it, a build runs on the thread that opened the log,
   * during the open.
   */
  readonly worker?: Loadable;
}

/** Where a projection stands, as `projections()` and `ledgerstore index status` tell it. */
export interface ProjectionProgress {
  readonly name: string;
  /** The version its definition has. */
  readonly version: number;
  /** `ready` once rows of its version answer it; `building` while they are built. */
  readonly state: 'ready' | 'building';
  /**
   * What answers its queries now: its `rows`; the rows of an older version (for the queries that
   * version still answers, the rest from memory); or a state replayed in `memory`.
   */
  readonly answering: 'rows' | 'previous version' | 'memory';
  /** While building: records built, of `total`, at `rate` records a second. */
  readonly done: number;
  readonly total: number;
  readonly rate: number;
  /** Why it is being built (another version, damage, a new read model), or `null`. */
  readonly why: string | null;
}

const NAME = /^[a-z0-9-]{1,64}$/;

/**
 * Checks the definitions a log is opened with: names that can be told apart, versions that are
 * whole numbers.
 * @throws TypeError naming the first that is not
 */
export function checkDefinitions<R>(definitions: readonly ProjectionDefinition<R>[]): void {
  const seen = new Set<string>();
  for (const definition of definitions) {
    if (!NAME.test(definition.name))
      throw new TypeError(`a projection's name is 1 to 64 of a-z 0-9 -, not ${JSON.stringify(definition.name)}`);
    if (seen.has(definition.name)) throw new TypeError(`two projections are named ${definition.name}`);
    seen.add(definition.name);
    if (!Number.isSafeInteger(definition.version) || definition.version < 1)
      throw new TypeError(
        `the projection ${definition.name}: its version is a whole number from 1, not ${definition.version}`,
      );
  }
}
