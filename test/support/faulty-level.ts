/**
 * A database in the shape the LevelDB backend takes (`LevelDatabase`) over a real abstract-level
 * one (memory-level, classic-level), whose calls fail on demand as a disk's or a remote store's
 * would: its open, the Nth `get`, an iterator's `nextv`, the Nth batch write (before writing the
 * batch, or after: written, and the caller told it failed); whose reads can be held back; whose
 * close can fail the reads it holds, as a store that aborts pending reads when it closes does;
 * and which records every batch written.
 */
import type { ByteEncodings, ByteRange, LevelBatch, LevelDatabase, LevelIterator } from '../../backends/level/index.js';

/** An error as a disk's failure reaches a caller: a message and a system error code. */
export function storeError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** How a batch write fails: before anything of it is written, or after it was written whole. */
export interface BatchFault {
  readonly when: 'before' | 'after';
  readonly error: Error;
}

export class FaultyLevel implements LevelDatabase {
  /** Every batch write so far, in order: its puts, and whether it asked for a sync. */
  readonly writes: { readonly puts: number; readonly sync: boolean }[] = [];
  /** When set, says whether the Nth batch write (from 1) fails, and how. */
  failBatch: ((n: number) => BatchFault | null) | null = null;
  /** The numbers of the batch writes that failed. */
  readonly failedBatches: number[] = [];
  /** When set, `open` rejects with it. */
  openFails: Error | null = null;
  /** When set, every iterator's `nextv` rejects with it. */
  nextvFails: Error | null = null;
  /** Calls of `get` so far, and of `nextv`; iterators made, and closed. */
  gets = 0;
  nextvs = 0;
  iterators = 0;
  iteratorsClosed = 0;
  private readonly getFaults = new Map<number, Error>();
  /** The reads held back by {@link hold}, and what ends them. */
  private held: {
    readonly promise: Promise<void>;
    readonly release: () => void;
    readonly fail: (error: Error) => void;
  } | null = null;
  /** Reads waiting in {@link hold} now. */
  waiting = 0;
  /** Whether `close` fails the reads held back (with LEVEL_ITERATOR_NOT_OPEN) rather than waiting for them. */
  abortReadsOnClose = false;

  constructor(readonly inner: LevelDatabase) {}

  /** The inner database's folder, when it has one: the backend names a database by it. */
  get location(): unknown {
    return (this.inner as { readonly location?: unknown }).location;
  }

  /** Fails the `at`th call of `get` from now (counted from 1) with `error`. */
  failGet(at: number, error: Error): this {
    this.getFaults.set(this.gets + at, error);
    return this;
  }

  /** Holds every `nextv` from now until {@link release} (or a close that aborts them). */
  hold(): void {
    let release = (): void => undefined;
    let fail = (_: Error): void => undefined;
    const promise = new Promise<void>((resolve, reject) => {
      release = resolve;
      fail = reject;
    });
    promise.catch(() => undefined); // each held read handles it
    this.held = { promise, release, fail };
  }

  /** Lets the held reads go on. */
  release(): void {
    this.held?.release();
    this.held = null;
  }

  get supports(): LevelDatabase['supports'] {
    return this.inner.supports;
  }
  async open(): Promise<void> {
    if (this.openFails !== null) throw this.openFails;
    await this.inner.open();
  }
  async close(): Promise<void> {
    if (this.abortReadsOnClose && this.held !== null) {
      this.held.fail(storeError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open: cannot read after close()'));
      this.held = null;
    }
    await this.inner.close();
  }
  keyEncoding(encoding: 'view'): { readonly format: string } {
    return this.inner.keyEncoding(encoding);
  }
  valueEncoding(encoding: 'view'): { readonly format: string } {
    return this.inner.valueEncoding(encoding);
  }
  async get<K, V>(key: K, options: ByteEncodings): Promise<V | undefined> {
    const fault = this.getFaults.get(++this.gets);
    if (fault !== undefined) throw fault;
    return this.inner.get<K, V>(key, options);
  }
  iterator<K, V>(options: ByteRange): LevelIterator<K, V> {
    const inner = this.inner.iterator<K, V>(options);
    this.iterators++;
    return {
      nextv: async (size: number): Promise<[K, V][]> => {
        this.nextvs++;
        if (this.nextvFails !== null) throw this.nextvFails;
        const held = this.held;
        if (held !== null) {
          this.waiting++;
          try {
            await held.promise;
          } finally {
            this.waiting--;
          }
        }
        return inner.nextv(size);
      },
      close: async (): Promise<void> => {
        this.iteratorsClosed++;
        await inner.close();
      },
    };
  }
  batch(): LevelBatch {
    const batch = this.inner.batch();
    let puts = 0;
    const wrapped: LevelBatch = {
      put: <K, V>(key: K, value: V, options: ByteEncodings) => {
        batch.put<K, V>(key, value, options);
        puts++;
        return wrapped;
      },
      write: async (options) => {
        this.writes.push({ puts, sync: options.sync });
        const n = this.writes.length;
        const fault = this.failBatch?.(n) ?? null;
        if (fault === null) return batch.write(options);
        this.failedBatches.push(n);
        if (fault.when === 'after') await batch.write(options);
        else await batch.close();
        throw fault.error;
      },
      close: () => batch.close(),
    };
    return wrapped;
  }
}
