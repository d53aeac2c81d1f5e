/**
 * A minimal log, as small as a backend on `lib/log-base.ts` can be: its records are lines of the
 * codec's text in an array that the backend object holds. The conformance suite runs on it
 * (`test/conformance/self.test.ts`), whole and with a flaw put in, to show that it passes a log
 * that keeps the promises and catches one that does not, as abstract-level's suite runs on its
 * `MinimalLevel`.
 */
import {
  type Appended,
  type AppendOptions,
  ConflictError,
  honchoCodec,
  LedgerIoError,
  type LogBackend,
  type LogCapabilities,
  type OpenOptions,
  type Position,
  type Record,
  type ResumePoint,
  StoredLog,
} from '../../lib/index.js';

/** A flaw to put in: what the suite must catch. */
export type Flaw =
  /** A second writer is let in. */
  | 'two writers'
  /** `read(from)` reads from the start. */
  | 'reads from the start'
  /** `resumePoint` answers on a closed log. */
  | 'resume point when closed'
  /** The expected head is checked before the records. */
  | 'head before records';

const CAPABILITIES: LogCapabilities = {
  durable: false,
  files: false,
  severalWriters: false,
  readsWhileWriting: true,
  atomicBatches: true,
  watches: false,
};

/** What the backend object holds: the lines, and whether the next write fails (to stop a log). */
export interface MinimalStore {
  readonly lines: string[];
  failNextWrite: boolean;
}

/** A backend of a minimal log, with a flaw if given. */
export function minimalBackend(flaw?: Flaw): LogBackend<Record> & { readonly store: MinimalStore } {
  const store: MinimalStore = { lines: [], failNextWrite: false };
  return {
    name: 'minimal:',
    capabilities: CAPABILITIES,
    store,
    open: (options = {}) => MinimalLog.open(store, options, flaw),
  };
}

class MinimalLog extends StoredLog<Record> {
  private constructor(
    private readonly store: MinimalStore,
    readOnly: boolean,
    private readonly flaw: Flaw | undefined,
  ) {
    super({
      name: 'minimal:',
      capabilities: CAPABILITIES,
      codec: honchoCodec,
      readOnly,
      writerKey: flaw === 'two writers' ? null : store,
    });
  }

  static open(store: MinimalStore, options: OpenOptions<Record>, flaw: Flaw | undefined): Promise<MinimalLog> {
    return new MinimalLog(store, options.readOnly ?? false, flaw).start(options);
  }

  private records(from: Position, to: Position): Record[][] {
    return [
      this.store.lines.slice(from, to).map((line) => honchoCodec.decode(Buffer.from(line), 0, Buffer.byteLength(line))),
    ];
  }

  protected _entries(from: Position): Record[][] {
    return this.records(from, this.store.lines.length);
  }

  protected _storedBefore({ position }: ResumePoint): string | undefined {
    return this.store.lines[position - 1];
  }

  protected _storedLast(): string | undefined {
    return this.store.lines[this.head - 1];
  }

  protected _append(records: readonly Record[]): void {
    if (this.store.failNextWrite) {
      this.store.failNextWrite = false;
      const failure = new LedgerIoError(this.name, new Error('the write failed'));
      this.stop(failure); // its outcome is not known: as a failed sync
      throw failure;
    }
    for (const record of records) this.store.lines.push(honchoCodec.encode(record));
  }

  protected *_read(from: Position): Generator<Record[]> {
    // a record a batch: the ledger reads a sent item's ids back by position, one record
    const head = this.head;
    for (let position = this.flaw === 'reads from the start' ? 0 : from; position < head; position++)
      yield* this.records(position, position + 1);
  }

  protected _close(): void {}

  override append(records: readonly Record[], options: AppendOptions = {}): Promise<Appended<Record>> {
    const { expectedHead } = options;
    if (this.flaw === 'head before records' && expectedHead !== undefined && expectedHead !== this.head) {
      return Promise.reject(new ConflictError(this.name, expectedHead, this.head));
    }
    return super.append(records, options);
  }

  override resumePoint(): Promise<ResumePoint> {
    return this.flaw === 'resume point when closed' ? Promise.resolve(this._resumePoint()) : super.resumePoint();
  }
}
