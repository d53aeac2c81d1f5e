/**
 * The event-log contract: what every backend (a JSONL file, LevelDB, memory, PostgreSQL, a
 * fault-injecting wrapper) promises. A log is an ordered, append-only sequence of records of one
 * type `R`; the Honcho ledger is built on a log of its records.
 *
 * The promises, which `test/conformance/` holds every backend to:
 * - **Reading through.** `open` reads every record in order and hands each to `replay` before it
 *   returns; a record the log cannot read, or one `replay` refuses, stops the open with a
 *   {@link DamagedError} naming its position, and the log is left as it was.
 * - **Durable before believed.** `append` resolves only once its records are on stable storage;
 *   a refused or failed append writes nothing that a later read or reopen takes for a record.
 * - **Whole batches.** The records of one `append` are acknowledged whole or not at all, and a
 *   refused or failed one leaves nothing that a read takes for a record. What a crash leaves of
 *   an append that had not resolved is, with `atomicBatches`, all of it or nothing; without (a
 *   JSONL file, where a batch is one write that a crash can cut at any line), a prefix of its
 *   records, each whole, in order.
 * - **Call order.** Appends are applied in the order they were called, each after every earlier
 *   one; `expectedHead` makes that check explicit for several writers.
 * - **One writer.** A writable open of a log that another writer holds fails with
 *   {@link LockedError}; a read-only open never takes the lock and never changes the log.
 *   With `severalWriters`, no lock: each append checks `expectedHead` in the storage instead.
 * - **Hearing of others.** With `watches`, `watch` tells of records that other writers (other
 *   log objects, in this process or another) appended, and `refresh` makes them this log's.
 *
 * What `head` is: the position after the last record this log object knows of: those its open
 * read through, its own appends, and those a `refresh` took in. Nothing else moves it: another
 * writer's append, a `read` that goes past it, or a watch that hears of a later head leave it
 * where it is, so that whoever owns the log (the ledger, whose state reflects `head`) moves it
 * when it has taken the records in. With one writer and no one else appending, it is the
 * store's head.
 *
 * The errors named here are in `errors.ts`.
 *
 * @module
 */
import type { LedgerError } from './errors.js';
import type { LineScan, ScannedLines } from './line-scan.js';
import type { ValueScan } from './value-scan.js';

/** A position in a log: the number of records before it. 0 is the start; `head` is the end. */
export type Position = number;

/**
 * What a backend can do, for the conformance suite (which tests each promise where it is made)
 * and for callers that choose a backend. Every backend reopens: a backend object opened again
 * gives the same log, with what was appended before.
 */
export interface LogCapabilities {
  /** An acknowledged append survives a crash of the process and of the machine. */
  readonly durable: boolean;
  /** The log lives in files that a path names (and that a second process can open). */
  readonly files: boolean;
  /** Several writers may append at once, each with `expectedHead`. */
  readonly severalWriters: boolean;
  /** A read-only open succeeds while a writer holds the log. */
  readonly readsWhileWriting: boolean;
  /** A crash leaves an unacknowledged batch whole or not at all (else: a prefix of it, each record whole). */
  readonly atomicBatches: boolean;
  /**
   * The log has {@link EventLog.watch}: it tells of records other writers append (in another
   * process too), as they append them. (Every log has {@link EventLog.refresh}.)
   */
  readonly watches: boolean;
  /**
   * With `severalWriters`: an append with `expectedHead` and {@link AppendOptions.keys} also
   * goes through past records of other keys that others appended since (see there). Absent:
   * `false`, and `keys` are stored nowhere and never let an append through.
   */
  readonly keyedAppends?: boolean;
}

/** The first records of a read-through ({@link OpenOptions.sizeHint}): how many bytes, how many records. */
export interface SizeSample {
  readonly bytes: number;
  readonly records: number;
}

/** How to open a log. */
export interface OpenOptions<R> {
  /**
   * Open without the writer's lock and without repairing anything: the log is read as it is,
   * a cut-off tail is ignored (and reported in `repaired`), and `append` is refused.
   */
  readonly readOnly?: boolean;
  /**
   * Called with every record, in order, while the log is read through at open (from
   * `resume.position` when resuming). A {@link RecordRefusedError} thrown here, or the promise it
   * returns rejected with one, stops the open as damage at that record; the log is not repaired
   * and nothing is changed. When it returns a promise, the next record waits for it.
   */
  readonly replay?: (record: R, position: Position) => void | Promise<void>;
  /**
   * Called instead of `replay` for each line of a log read with its codec's line scan
   * (`RecordCodec.lineScan`), with the line as the scan found it: for a replay that can take a
   * line without its record being made (`line.record()` makes it). What it throws is as what
   * `replay` throws. A log read otherwise calls `replay`.
   */
  readonly replayLine?: (line: ScannedLines<R>, position: Position) => void | Promise<void>;
  /**
   * Called once, by a backend that knows it, with how many bytes of stored records the open is
   * to read (a JSONL file's, from where the read-through starts), and what the first of them
   * held: the read-through's first run of lines, taken before the call (a few MiB at most), so
   * that a replay can size what it builds from the records a byte holds in this log rather than
   * a guess (a log of long lines holds far fewer). A hint, never a count. A backend that does not
   * know does not call it.
   */
  readonly sizeHint?: (bytes: number, first: SizeSample) => void;
  /**
   * Read through from this point only, trusting what comes before it: `replay` sees the records
   * from `resume.position` on. The point must be one this log gave (`resumePoint()`) and still
   * hold: when the log is shorter, or holds another record before the point, the open fails
   * with {@link ResumeMismatchError} and changes nothing (read it through from the start then).
   */
  readonly resume?: ResumePoint;
}

/**
 * A place in a log to open it from later without reading what comes before (a read model's
 * checkpoint keeps one): the position, the backend's own locator of it, and a fingerprint of
 * the record before it, by which the log tells whether it still holds what it held.
 */
export interface ResumePoint {
  readonly position: Position;
  /** The backend's locator of the position (a JSONL file's byte offsets), as JSON data; `null` if it needs none. */
  readonly cursor: unknown;
  /** The backend's fingerprint (SHA-256, hex) of the stored record at `position - 1`; `''` at 0. */
  readonly fingerprint: string;
}

/** What `open` found at the end of the log and dropped: bytes of a write a crash cut off. */
export interface Repair {
  /** Where the whole records end, in the backend's own unit (bytes for a file). */
  readonly at: number;
  /** How much was dropped after that, in the same unit. */
  readonly dropped: number;
  /** Whether the dropped tail was cut from storage (`false` for a read-only open). */
  readonly cut: boolean;
}

/** How to append. */
export interface AppendOptions {
  /**
   * The head the caller believes the log has. When the log's head differs, the append is
   * refused with a {@link ConflictError} and nothing is written.
   */
  readonly expectedHead?: Position;
  /**
   * One key a record: what it is about (the Honcho ledger's: its item), for a log with
   * `keyedAppends`, which keeps them. With `expectedHead`, the append then also goes through
   * when the store's head moved past `expectedHead` by records (a bounded number of them) none
   * of which has one of these keys, nor none at all (a record appended without keys clashes
   * with every key): it lands at the store's head, after them, and {@link Appended.passed}
   * gives them, so that the caller takes in every record in log order. Otherwise the append is
   * refused with a {@link ConflictError}, as without keys. A log without `keyedAppends` ignores
   * them. A caller whose check of a record looks only at records of the same key may pass them;
   * one whose check looks wider may not.
   */
  readonly keys?: readonly string[];
}

/** Where an append put its records: positions `from` to `head - 1`. */
export interface Appended<R = never> {
  readonly from: Position;
  readonly head: Position;
  /**
   * The records at `expectedHead` up to `from`, in order, that a keyed append went past
   * ({@link AppendOptions.keys}); absent when it went at `expectedHead`. The log's `head` is
   * past them and the append's records. Fewer than `from - expectedHead` when one of them is
   * damaged (it does not decode): they end before it, and the log has stopped with that damage
   * (the append itself is durable).
   */
  readonly passed?: readonly R[];
}

/** Stops a watch; resolves once nothing more will be told. */
export type Unwatch = () => Promise<void>;

/** What a watch tells (see {@link EventLog.watch}). */
export interface HeadWatcher {
  /**
   * The store's head: when the watch starts, then each time it is seen higher, whoever appended
   * (this log object too). A hint, after which `refresh` and `read` give the records: a head may
   * be told late, or one higher head for several appends, never a head the store did not reach.
   * A callback that throws has a bug of its own: its error is thrown as an uncaught exception,
   * as a Node listener's is, and the watch goes on (it is no failure of the log).
   */
  readonly onHead: (head: Position) => void;
  /**
   * The watch cannot go on, and has ended: the store went back below a head it told of
   * ({@link LogWentBackError}: records it held are gone, as after a failover to a standby that
   * had not received them, or a file cut short), or the storage watched is no longer the log's
   * (a file replaced). Called once at most. Without it, such a failure is told by the next
   * `refresh` alone.
   */
  readonly onFailure?: (failure: LedgerError) => void;
}

/**
 * A claim that one holder of a log has at a time, among every process that opens it: the
 * Honcho ledger's sender lease (one sender per ledger). It dies with its holder: a process that
 * ends, a connection that is lost.
 */
export interface Lease {
  /** Aborted once the lease is gone: released, lost (its session ended), or its log closed. */
  readonly signal: AbortSignal;
  /** Gives the lease up; once it resolves, another may take it. */
  release(): Promise<void>;
}

/** An open log of records of type `R`. */
export interface EventLog<R> {
  /** A name for messages: a file's path, a folder, a URI. */
  readonly name: string;
  readonly capabilities: LogCapabilities;
  /**
   * The position after the last record this log object knows of (see the module's comment):
   * the number of records, when no one else appends.
   */
  readonly head: Position;
  /** What `open` found cut off at the end, or `null`. */
  readonly repaired: Repair | null;
  /**
   * Appends `records` as one atomic batch and resolves once they are durable. An empty batch
   * resolves at once. Rejects with a {@link LedgerError}: nothing of a rejected batch is believed.
   * A {@link CheckedRecord} is for a log built on `LogBase` (every backend's), which unwraps it:
   * the Honcho ledger hands wrappers to such a log only, and plain records to any other.
   */
  append(records: readonly Appendable<R>[], options?: AppendOptions): Promise<Appended<R>>;
  /**
   * The records from `from` (default 0) up to `to`, in order, or before `to` where a read
   * without it ends: at the head when the read starts, which with `severalWriters` is the
   * store's head (it may be past `head`).
   */
  read(from?: Position, to?: Position): AsyncIterable<R>;
  /**
   * Takes in what others appended: moves `head` to the store's head now and gives it, so that
   * `read` and `resumePoint` reach it. With no one else appending, it is `head`. Waits for the
   * appends called before it.
   * @throws {@link LogWentBackError} when the store holds fewer records than `head` (the log
   *   stops: every later append is refused until it is reopened)
   */
  refresh(): Promise<Position>;
  /**
   * With `watches`: tells `watcher` of the store's head as it rises (see {@link HeadWatcher}),
   * until the returned `Unwatch` is called or the log closes. Resolves once it listens: a head
   * reached after that is told. Absent without `watches`.
   * @throws `LedgerIoError` when it cannot start listening
   */
  watch?(watcher: HeadWatcher): Promise<Unwatch>;
  /**
   * Takes the lease `name` if no other holder has it: `null` when one does. With one writer,
   * the writer holds every lease there is (no other process can append), one holder at a time
   * in this process; with several, the storage keeps it (PostgreSQL: an advisory lock held by a
   * session of its own).
   * @throws `ReadOnlyError` on a read-only log, which cannot act on what it holds
   */
  lease(name: string): Promise<Lease | null>;
  /** The point at the head now, to resume an open from later (see {@link OpenOptions.resume}). */
  resumePoint(): Promise<ResumePoint>;
  /** Releases the lock and the files. Later calls are refused with {@link ClosedError}; `close` again does nothing. */
  close(): Promise<void>;
  /**
   * `close`, for `await using log = await backend.open()`: every log built on `LogBase` has it; a
   * log of one's own gives `[Symbol.asyncDispose]() { return this.close(); }`.
   */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * How a backend turns records into bytes and back, and checks a caller's records. The Honcho
 * ledger's is `honchoCodec`; a line-oriented backend stores `encode`'s text as one line.
 */
export interface RecordCodec<R> {
  /**
   * A caller's record, checked, as a fresh value that later changes to `value` do not reach.
   * @throws `InvalidRecordError` naming what is wrong
   */
  normalize(value: unknown): R;
  /**
   * The record's canonical text (one line, no newline).
   * @throws `InvalidRecordError` when `record` is not valid
   */
  encode(record: R): string;
  /**
   * The canonical text of a record that `normalize` gave, not checked again: what a
   * {@link CheckedRecord}'s `line` is made with. Without it, `encode` is used.
   */
  encodeChecked?(record: R): string;
  /**
   * Reads the bytes `[start, end)` of one line.
   * @throws `DecodeError` saying why they are not a record
   */
  decode(bytes: Uint8Array, start: number, end: number): R;
  /**
   * How every line `encode` writes begins (the Honcho records': `{"type":"decided","time":"`,
   * and the same for `sent` and `failed`). A JSONL log whose file holds no whole line takes the
   * bytes in it for a line a crash cut off only when they begin as one of these does (a NUL
   * standing for a byte a power loss left unwritten); otherwise the file is not one it wrote,
   * and it is refused as damage at line 1 instead of being cut. Without them, any such bytes
   * are taken for a cut-off line.
   */
  readonly lineStarts?: readonly string[];
  /**
   * How to read many lines at once, on worker threads when the log is large (`line-scan.ts`).
   * Without it, a line-oriented backend decodes each line with `decode`, on this thread.
   */
  readonly lineScan?: LineScan<R>;
  /**
   * How to read many stored values at once (`value-scan.ts`): the LevelDB log's records, as
   * `backends/level/values.ts` stores them. Without it, each value is decoded and given to `normalize`.
   */
  readonly valueScan?: ValueScan<R>;
}

/**
 * The longest line a line-oriented backend (the JSONL file) writes or reads: 64 MiB, counted in
 * UTF-8 bytes without its newline. The Honcho ledger's lines are a few hundred bytes (a turn's
 * text is never in them); the bound keeps the memory an open needs to one line and one chunk,
 * and far below what a JavaScript string can hold (about 512 MiB), which a longer line would
 * exceed when decoded. A codec whose records could be longer refuses them in `normalize`, so
 * that one caller's record does not fail a batch of others' (the Honcho codec does).
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Why a record is refused whose line would be `bytes` long (or, not `exact`, at least that), over {@link MAX_LINE_BYTES}. */
export function lineTooLong(bytes: number, exact = true): string {
  return `its line would be ${exact ? '' : 'at least '}${bytes} bytes, more than the ${MAX_LINE_BYTES} bytes (64 MiB) a ledger's line may hold`;
}

/** How a backend writes the records the base checked: the codec's `encodeChecked`, or its `encode`. */
export function checkedEncoder<R>(codec: RecordCodec<R>): (record: R) => string {
  return codec.encodeChecked === undefined
    ? (record) => codec.encode(record)
    : (record) => (codec.encodeChecked as (record: R) => string)(record);
}

/**
 * A record its codec checked, which a log of that codec takes as it is: neither checked nor
 * encoded again. {@link CheckedRecord.check} is the only way to make one (nothing else can: it
 * is told by a private field, not by its shape), so a log that finds one made by its own codec
 * knows the record is valid and is this value's alone. A caller that checks its records before
 * it appends them (the Honcho ledger checks each before its rules) hands the log these instead
 * of the records; any other record, or one checked by another codec, is checked by the log as
 * always.
 *
 * The line is made once, when first asked for (a JSONL file writes it, PostgreSQL stores it;
 * LevelDB and memory take the record and never ask), and kept: the bytes are the codec's own,
 * as `encode` would write them. So `record` must not be changed once checked (it is not frozen:
 * that would cost the append path a freeze of every object a record holds): a log takes it as
 * `check` left it, and a change made since would be written unchecked. Hand the log a value to
 * keep changing as a plain record instead, which the log checks into a copy of its own.
 *
 * @example
 * ```ts
 * const checked = CheckedRecord.check(honchoCodec, record); // throws InvalidRecordError
 * await log.append([checked]); // not checked again
 * ```
 */
export class CheckedRecord<R> {
  readonly #codec: RecordCodec<R>;
  #line: string | undefined = undefined;
  /** The record, as the codec's `normalize` gave it: a fresh value the caller's later changes do not reach. */
  readonly record: R;

  private constructor(codec: RecordCodec<R>, record: R) {
    this.#codec = codec;
    this.record = record;
  }

  /**
   * `value` checked by `codec.normalize`, ready for a log of that codec.
   * @throws the codec's `InvalidRecordError` when it is not a valid record
   */
  static check<R>(codec: RecordCodec<R>, value: unknown): CheckedRecord<R> {
    return new CheckedRecord(codec, codec.normalize(value));
  }

  /** Whether `value` is a checked record made by `codec` itself (another codec's check is no promise for this one). */
  static madeBy<R>(value: unknown, codec: RecordCodec<R>): value is CheckedRecord<R> {
    return typeof value === 'object' && value !== null && #codec in value && value.#codec === (codec as unknown);
  }

  /** The record's canonical text (one line, no newline), made on the first call and kept. */
  get line(): string {
    if (this.#line === undefined) {
      const codec = this.#codec;
      this.#line = codec.encodeChecked === undefined ? codec.encode(this.record) : codec.encodeChecked(this.record);
    }
    return this.#line;
  }
}

/** What `append` takes: records, or records their codec checked ({@link CheckedRecord}). */
export type Appendable<R> = R | CheckedRecord<R>;

/** Something that opens a log: a backend bound to its location. */
export interface LogBackend<R> {
  /** A name for messages: a file's path, a folder, a URI. */
  readonly name: string;
  readonly capabilities: LogCapabilities;
  /**
   * Opens the log and reads it through.
   * @throws {@link DamagedError} when a record does not read or `replay` refuses it
   * @throws {@link LockedError} when another writer holds the log
   */
  open(options?: OpenOptions<R>): Promise<EventLog<R>>;
}
