/**
 * One LevelDB database of a read model, as the projections use it: batches of rows written in
 * one atomic write, rows read synchronously (a row is a few dozen bytes, most often in LevelDB's
 * block cache, and a round trip through the thread pool would cost ten times the lookup), ranges
 * read in key order, and LevelDB's failures as ledgerstore's errors. A database is a folder's
 * (classic-level), or one a caller made (any abstract-level database of bytes).
 *
 * Once a read finds it damaged (LevelDB says so, or a row does not match its checksum), every
 * later read and write is refused, and a folder's marker says so (synced), so that the next open
 * throws the database away and builds its rows again.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type { AbstractLevel } from 'abstract-level';
import { writeMarker } from '../database-folder.js';
import { abstractLevel, classicLevel } from '../dependencies.js';
import { IndexDamagedError, LedgerError, LedgerIoError } from '../errors.js';
import { MODEL_MARKER } from './layout.js';

export type Bytes = Uint8Array;

/**
 * A read model's database: a folder's (classic-level), or any abstract-level database of bytes a
 * caller made (`new MemoryLevel<Uint8Array, Uint8Array>()` for tests). Every operation on it
 * passes byte encodings, whatever its own defaults are.
 */
export type Db = AbstractLevel<string | Buffer | Uint8Array, Bytes, Bytes>;

/** Keys and values as bytes, on every operation of the database. */
export const VIEW = { keyEncoding: 'view', valueEncoding: 'view' } as const;

/** Writes that land together or not at all. */
export interface DbBatch {
  /** Whether `put` and `del` copy the bytes they are given (a caller may reuse them then). */
  readonly copies: boolean;
  put(key: Bytes, value: Bytes): void;
  del(key: Bytes): void;
  /** Writes the batch; with `sync`, LevelDB's write-ahead log is synced before it resolves. */
  write(sync: boolean): Promise<void>;
}

/**
 * classic-level's chained batch below abstract-level's public one: the calls abstract-level's
 * `put` makes once it has checked and encoded its arguments. The public `put` spends about 3 µs
 * a row on options, encodings and events a read model never uses (measured against 0.45 µs for
 * these), which is most of a build's time (a cold 200k build: 1.55-1.6x as long through the
 * public batch); the keys and values here are bytes already.
 *
 * A reach below a public API, so it is guarded ({@link nativeBatchOf}): taken only under the
 * versions it was written for ({@link NATIVE_BATCH_VERSIONS}, which package.json pins and
 * test/public-paths.test.ts holds to the installed ones) and only where classic-level's batch
 * class defines the three calls itself; anywhere else the public chained batch is used.
 */
export interface NativeBatch {
  _put(key: Bytes, value: Bytes): void;
  _del(key: Bytes): void;
  _write(options: { readonly sync: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** The versions of abstract-level and classic-level whose batch {@link NativeBatch} was written against. */
export const NATIVE_BATCH_VERSIONS = { 'abstract-level': '3.1.1', 'classic-level': '3.0.0' } as const;

/** The installed version of `name` (its package.json), or `null` when it cannot be read. */
export function installedVersion(name: keyof typeof NATIVE_BATCH_VERSIONS): string | null {
  try {
    const version = (createRequire(import.meta.url)(`${name}/package.json`) as { version?: unknown }).version;
    return typeof version === 'string' ? version : null;
  } catch {
    return null;
  }
}

const nativeVersions =
  installedVersion('abstract-level') === NATIVE_BATCH_VERSIONS['abstract-level'] &&
  installedVersion('classic-level') === NATIVE_BATCH_VERSIONS['classic-level'];

/**
 * `batch` as a {@link NativeBatch} when its calls can be taken: the installed versions are the
 * ones it was written for (`versions`, by default what is installed), and its class defines
 * `_put`, `_del` and `_write` itself (abstract-level's base class has do-nothing ones); else
 * `null`, and the caller uses the public batch.
 */
export function nativeBatchOf(batch: object, versions: boolean = nativeVersions): NativeBatch | null {
  if (!versions) return null;
  const base = abstractLevel().AbstractChainedBatch.prototype as unknown as { readonly [call: string]: unknown };
  for (const call of ['_put', '_del', '_write']) {
    const its = (batch as { readonly [call: string]: unknown })[call];
    if (typeof its !== 'function' || its === base[call]) return null;
  }
  return batch as NativeBatch;
}

/** The error LevelDB gives when it finds its files damaged. */
export const isCorruption = (e: unknown): boolean =>
  (e as { code?: unknown } | null)?.code === 'LEVEL_CORRUPTION' ||
  (e as { cause?: { code?: unknown } } | null)?.cause?.code === 'LEVEL_CORRUPTION';

/** One database, open, and the generations of rows it holds (`generation.ts`). */
export class Database {
  /** Set once it was found damaged: nothing more is read or written. */
  private damage: IndexDamagedError | null = null;
  /** The last batch submitted (written after those before it). */
  private writing: Promise<void> = Promise.resolve();
  /** Set once a write failed: LevelDB lacks rows that reads would take for written. */
  private writeFailure: LedgerError | null = null;

  /**
   * @param name the folder, or the caller's database's name, for messages
   * @param folder the folder it is in, `null` for a database the caller made (or one in memory)
   * @param owned whether closing the read model closes it (a caller's database stays open)
   */
  constructor(
    readonly name: string,
    readonly db: Db,
    readonly folder: string | null,
    private readonly owned: boolean,
  ) {}

  /** The damage found, if any. */
  get damaged(): IndexDamagedError | null {
    return this.damage;
  }

  /**
   * The database is damaged: marks its folder (synced) so that the next open discards it and
   * builds its rows again, and from now on refuses every read and write. Gives the error to throw.
   */
  markDamaged(why: string, cause?: unknown): IndexDamagedError {
    if (this.damage !== null) return this.damage;
    this.damage = new IndexDamagedError(this.name, why, cause === undefined ? undefined : { cause });
    if (this.folder === null) return this.damage;
    try {
      writeMarker(this.folder, { ...MODEL_MARKER, discard: why });
    } catch {
      // refused from now on all the same; the next open finds the damage again
    }
    return this.damage;
  }

  /** A failure of LevelDB's, as the read model's error: damage when LevelDB says so. */
  failure(e: unknown): LedgerError {
    if (e instanceof LedgerError) return e;
    if (isCorruption(e)) return this.markDamaged(`LevelDB finds it damaged (${(e as Error).message})`, e);
    return new LedgerIoError(this.name, e);
  }

  /** @throws the damage found, or the write that failed, once there is one */
  assertSound(): void {
    if (this.damage !== null) throw this.damage;
    if (this.writeFailure !== null) throw this.writeFailure;
  }

  /** A row's stored bytes, or `undefined`. */
  getSync(key: Bytes): Bytes | undefined {
    this.assertSound();
    try {
      return this.db.getSync(key);
    } catch (e) {
      throw this.failure(e);
    }
  }

  /** The stored bytes of several rows (`undefined` for one there is not), in one read of LevelDB's. */
  async getMany(keys: Bytes[]): Promise<(Bytes | undefined)[]> {
    this.assertSound();
    try {
      return await this.db.getMany<Bytes, Bytes>(keys, VIEW);
    } catch (e) {
      throw this.failure(e);
    }
  }

  /** A new batch (see {@link NativeBatch} for why classic-level's is written below its public API). */
  batch(): DbBatch {
    this.assertSound();
    const db = this.db;
    const made = db.batch();
    const native = db instanceof classicLevel().ClassicLevel ? nativeBatchOf(made) : null;
    if (native !== null) {
      return {
        // LevelDB's write batch holds its own copy of every key and value
        copies: true,
        put: (key, value) => native._put(key, value),
        del: (key) => native._del(key),
        write: async (sync) => {
          try {
            await native._write({ sync });
          } catch (e) {
            throw this.failure(e);
          } finally {
            await native.close().catch(() => undefined);
          }
        },
      };
    }
    return this.publicBatch(made);
  }

  /** abstract-level's public chained `batch`: for any database, and where {@link nativeBatchOf} refuses. */
  publicBatch(batch: ReturnType<Db['batch']> = this.db.batch()): DbBatch {
    this.assertSound();
    return {
      copies: false,
      put: (key, value) => void batch.put<Bytes, Bytes>(key, value, VIEW),
      del: (key) => void batch.del<Bytes>(key, VIEW),
      write: async (sync) => {
        try {
          await batch.write({ sync });
        } catch (e) {
          throw this.failure(e);
        }
      },
    };
  }

  /**
   * Submits a batch: `fill` puts its writes in it now, and it is written after every batch
   * submitted before it (two writes in flight at once could land in either order). Resolves when
   * it is written; a failed write fails every later one.
   */
  submit(fill: (batch: DbBatch) => void, sync = false): Promise<void> {
    const batch = this.batch();
    fill(batch);
    const before = this.writing;
    const written = (async () => {
      await before;
      try {
        await batch.write(sync);
      } catch (e) {
        // the rows a later read expects are not there: every later read and write is refused
        this.writeFailure ??= this.failure(e);
        throw this.writeFailure;
      }
    })();
    this.writing = written;
    written.catch(() => undefined); // reported to whoever waits for it
    return written;
  }

  /** Waits for every batch submitted so far; rejects if one failed. */
  async settled(): Promise<void> {
    await this.writing;
  }

  /** An iterator over a range of keys, in order (or reversed), at most `limit`: entries a chunk at a time. */
  iterator(range: {
    readonly gt?: Bytes;
    readonly gte?: Bytes;
    readonly lt?: Bytes;
    readonly lte?: Bytes;
    readonly reverse?: boolean;
    readonly limit?: number;
  }): { next(size: number): Promise<[Bytes, Bytes][]>; close(): Promise<void> } {
    this.assertSound();
    const iterator = this.db.iterator<Bytes, Bytes>({ ...range, ...VIEW });
    return {
      next: async (size) => {
        this.assertSound();
        try {
          return await iterator.nextv(size);
        } catch (e) {
          throw this.failure(e);
        }
      },
      close: () => iterator.close(),
    };
  }

  /** Deletes every key in `[gte, lt)`. */
  async clear(gte: Bytes, lt: Bytes): Promise<void> {
    this.assertSound();
    try {
      await this.db.clear<Bytes>({ gte, lt, keyEncoding: 'view' });
    } catch (e) {
      throw this.failure(e);
    }
  }

  async close(): Promise<void> {
    await this.writing.catch(() => undefined); // a failed write was reported where it mattered
    if (!this.owned) return;
    try {
      await this.db.close();
    } catch (e) {
      throw new LedgerIoError(this.name, e);
    }
  }
}
