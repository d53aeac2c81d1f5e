/**
 * {@link StoredLog}: a log over storage of its own (every backend's), on {@link LogBase}: the
 * checked `append`, one writer per process, the resume check and the read-through at open. What
 * the two keep between them is told in `../log-base.ts`.
 *
 * @module
 */
import {
  asDamage,
  DamagedError,
  InvalidRecordError,
  LockedError,
  LogWentBackError,
  ResumeMismatchError,
} from '../errors.js';
import { assertExpectedHead } from '../expected-head.js';
import { fingerprintOf } from '../fingerprint.js';
import { isScannedLines } from '../line-scan.js';
import {
  type Appendable,
  type Appended,
  type AppendOptions,
  CheckedRecord,
  type OpenOptions,
  type Position,
  type RecordCodec,
  type Repair,
  type ResumePoint,
} from '../log.js';

import { type EntryBatches, LogBase, type LogSpec } from './base.js';

/**
 * The keys of the logs this process has open for writing (one writer each): a file's absolute
 * path, a database object. Strings and objects never collide.
 */
const writers = new Set<unknown>();

/**
 * A log over storage of its own (a file, a database): the base's calls, `append` (the records
 * checked by the codec, then in its turn the expected head and the empty batch), and the open:
 * the one writer per process, the resume check and the read-through. A backend writes its I/O:
 * {@link StoredLog._open}, {@link StoredLog._storedBefore}, {@link StoredLog._entries},
 * {@link StoredLog._storedLast}, {@link StoredLog._append}, {@link LogBase._read} and
 * {@link LogBase._close}, and opens a log with {@link StoredLog.start}.
 */
export abstract class StoredLog<R> extends LogBase<R> {
  /** Checks the records appended, once, when `append` is called. */
  private readonly checker: RecordCodec<R>;
  /** What this log holds while open for writing, among {@link writers}; `null` when none. */
  private readonly writerKey: unknown;
  private holding = false;
  /** The head: set by the read-through at open, moved by each append. */
  protected count: Position = 0;
  /** What the open cut off at the end, or `null`. */
  protected repair: Repair | null = null;

  /**
   * @param codec checks the records appended
   * @param writerKey what one writer per process holds (see {@link writers}); `null` for none
   */
  protected constructor(spec: LogSpec & { readonly codec: RecordCodec<R>; readonly writerKey: unknown }) {
    super(spec);
    this.checker = spec.codec;
    this.writerKey = spec.writerKey;
  }

  get head(): Position {
    return this.count;
  }

  get repaired(): Repair | null {
    return this.repair;
  }

  append(records: readonly Appendable<R>[], { expectedHead, keys }: AppendOptions = {}): Promise<Appended<R>> {
    const codec = this.checker;
    // every record checked before any is written: one that is not valid refuses the batch
    const checked = new Array<CheckedRecord<R>>(records.length);
    try {
      this.assertAppendable();
      if (keys !== undefined && keys.length !== records.length)
        throw new InvalidRecordError(`an append gave ${keys.length} keys for ${records.length} records: one a record`);
      for (let n = 0; n < records.length; n++) {
        const record = records[n];
        // one this log's codec checked is valid and the caller's no more: a second check finds nothing
        checked[n] = CheckedRecord.madeBy(record, codec)
          ? record
          : CheckedRecord.check(codec, record instanceof CheckedRecord ? record.record : record);
      }
    } catch (e) {
      return Promise.reject(e);
    }
    return this.inTurn(() => this.appendInTurn(checked, expectedHead, keys));
  }

  /** An append's turn: stopped (again: an earlier append may have stopped the log), the expected head, the empty batch, then the write. */
  private appendInTurn(
    checked: readonly CheckedRecord<R>[],
    expectedHead: Position | undefined,
    keys: readonly string[] | undefined,
  ): Appended<R> | Promise<Appended<R>> {
    this.assertRunning();
    const from = this.count;
    // Several writers: only the storage knows the head, and checks it as it writes.
    const headChecked = this.capabilities.severalWriters && checked.length > 0;
    if (!headChecked) assertExpectedHead(this.name, expectedHead, from);
    if (checked.length === 0) return { from, head: from };
    const records = new Array<R>(checked.length);
    for (let n = 0; n < checked.length; n++) records[n] = (checked[n] as CheckedRecord<R>).record;
    const written = this._append(records, headChecked ? expectedHead : undefined, keys, checked);
    return written instanceof Promise
      ? written.then((placed) => this.advance(from, records.length, placed))
      : this.advance(from, records.length, written);
  }

  /** Moves `head` to the store's head, which must not be below it (see {@link StoredLog._storedHead}). */
  protected _refresh(): Position | Promise<Position> {
    let found: Position | Promise<Position>;
    try {
      found = this._storedHead();
    } catch (e) {
      return this.wentBack(e);
    }
    return found instanceof Promise
      ? found.then(
          (head) => this.moveHeadTo(head),
          (e) => this.wentBack(e),
        )
      : this.moveHeadTo(found);
  }

  /** Moves `head` to `found`, the store's head, or stops the log when it is below. */
  private moveHeadTo(found: Position): Position {
    if (found < this.count)
      return this.wentBack(new LogWentBackError(this.name, this.count, `it holds ${found} records`));
    this.count = found;
    return found;
  }

  /** Stops the log when `failure` says it went back; throws `failure`. */
  private wentBack(failure: unknown): never {
    if (failure instanceof LogWentBackError) this.stop(failure);
    throw failure;
  }

  /** Moves the head past an append: to where the storage says it went, or by its records. */
  private advance(from: Position, appended: number, placed: Appended<R> | void): Appended<R> {
    if (placed === undefined) {
      this.count = from + appended;
      return { from, head: this.count };
    }
    this.count = Math.max(this.count, placed.head);
    return placed;
  }

  /**
   * Opens the log: takes the writer's place, opens the storage, checks the resume point, and
   * reads the log through. On a failure the storage is closed and the place given up.
   * @throws {@link LockedError} when another open in this process writes the log
   * @throws {@link ResumeMismatchError} when the log does not hold `resume`
   * @throws {@link DamagedError} when a record does not read or `replay` refuses it
   */
  protected async start({ replay, replayLine, resume }: OpenOptions<R>): Promise<this> {
    // Taken before the first await: no other open can slip in between the look and the taking.
    if (!this.readOnly && this.writerKey !== null) {
      if (writers.has(this.writerKey)) throw new LockedError(this.name);
      writers.add(this.writerKey);
      this.holding = true;
    }
    let position = 0;
    try {
      await this._open();
      if (resume !== undefined && resume.position > 0) {
        await this.checkResume(resume);
        position = resume.position;
      }
      try {
        for await (const batch of this._entries(position)) {
          if (isScannedLines(batch)) {
            while (batch.next()) {
              // read whether or not there is a replay: an open reads every record through
              const replayed =
                replayLine !== undefined
                  ? replayLine(batch, position)
                  : replay === undefined
                    ? void batch.record()
                    : replay(batch.record(), position);
              if (replayed instanceof Promise) await replayed;
              position++;
            }
            continue;
          }
          for (const record of batch) {
            // read whether or not there is a replay: an open reads every record through
            const replayed = replay?.(record, position);
            if (replayed instanceof Promise) await replayed;
            position++;
          }
        }
      } catch (e) {
        throw asDamage(this.name, position + 1, e);
      }
      this.count = position;
      return this;
    } catch (e) {
      await this.abandon();
      throw e;
    }
  }

  /** Closes what a failed open had opened, quietly: the open's own error is the one to report. */
  private async abandon(): Promise<void> {
    try {
      await this._close();
    } catch {
      // the open failed already
    } finally {
      this.released();
    }
  }

  protected override released(): void {
    if (this.holding) writers.delete(this.writerKey);
    this.holding = false;
  }

  /** @throws {@link ResumeMismatchError} unless the record before `point` is the one it was */
  private async checkResume(point: ResumePoint): Promise<void> {
    const stored = await this._storedBefore(point);
    if (stored === undefined)
      throw new ResumeMismatchError(this.name, point.position, `the log holds no record ${point.position}`);
    if (fingerprintOf(stored) !== point.fingerprint)
      throw new ResumeMismatchError(this.name, point.position, 'the record before it is not the one it was');
  }

  protected _resumePoint(): ResumePoint | Promise<ResumePoint> {
    const position = this.count;
    if (position === 0) return { position: 0, cursor: null, fingerprint: '' };
    const cursor = this._cursor(); // taken now: the head may move while the record is fetched
    const stored = this._storedLast();
    const point = (last: Uint8Array | string | undefined): ResumePoint => {
      if (last === undefined) throw new DamagedError(this.name, position, `record ${position} is missing`);
      return { position, cursor, fingerprint: fingerprintOf(last) };
    };
    return stored instanceof Promise ? stored.then(point) : point(stored);
  }

  /** Opens the storage, before the read-through (a file, a connection, a lock). */
  protected _open(): void | Promise<void> {}

  /**
   * The stored form of the record before `point` (at `point.position - 1`, at least 0), found
   * with the point's cursor where that helps, and the read-through readied to start after it;
   * `undefined` when the log holds no such record. A backend with its own reasons for a
   * mismatch (a cursor past the end) may throw its {@link ResumeMismatchError}.
   */
  protected abstract _storedBefore(
    point: ResumePoint,
  ): Uint8Array | string | undefined | Promise<Uint8Array | string | undefined>;

  /**
   * The records from `from` (0, or the resume point's position) to the end, for the read-through,
   * in batches (of records, or runs of scanned lines); a record that does not read is thrown in
   * its place, as {@link LogBase._read} does. Decoded lazily, a record is read only once every
   * record before it was replayed.
   */
  protected abstract _entries(from: Position): EntryBatches<R>;

  /** The stored form of the last record (at `head - 1`; called only when there is one), or `undefined` when it is missing. */
  protected abstract _storedLast(): Uint8Array | string | undefined | Promise<Uint8Array | string | undefined>;

  /**
   * Writes `records` (checked, at least one) durably as one batch, after every earlier append.
   * Returns where they went when the storage decides that (several writers), else nothing: they
   * went at the head. A failure after which the log's end is not known calls {@link LogBase.stop} first.
   * @param expectedHead the caller's, for a backend with several writers to check as it writes
   *   (`undefined` otherwise: the base checked it)
   * @param keys the caller's, one a record, for a backend with `keyedAppends` (`AppendOptions.keys`)
   * @param checked the same records as {@link CheckedRecord}s (`checked[n].record` is
   *   `records[n]`): a backend that stores a record's text takes `checked[n].line`, made once
   *   (perhaps by the caller already), rather than encoding it again
   */
  protected abstract _append(
    records: readonly R[],
    expectedHead: Position | undefined,
    keys: readonly string[] | undefined,
    checked: readonly CheckedRecord<R>[],
  ): void | Appended<R> | Promise<void | Appended<R>>;

  /**
   * The store's head now, with what a read and a resume point at it need readied (where the
   * records past `head` are); no append is running. Lower than `head` is a log that went back,
   * which the base stops (a backend that finds it its own way may throw its
   * {@link LogWentBackError}). With one writer, and no one else appending: `head` (the default).
   */
  protected _storedHead(): Position | Promise<Position> {
    return this.count;
  }

  /** The backend's locator of the head, for a resume point (JSON data); `null` when it needs none. */
  protected _cursor(): unknown {
    return null;
  }
}
