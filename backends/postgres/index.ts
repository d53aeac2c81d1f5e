/**
 * The PostgreSQL backend: a log of records in a PostgreSQL database that several writers, in
 * several processes on several machines, append to at once, each with `expectedHead`.
 *
 * ```ts
 * const backend = postgresBackend('postgres://bx@db.example/bx?log=honcho', { codec: honchoCodec });
 * const ledger = await Ledger.open(backend); // or Ledger.open('postgres://...') for Honcho records
 * ```
 *
 * - **Where**: see `uri.ts` (a node-postgres URI plus `log=`, `schema=` and `timeout=`, the deadline); the schema, its
 *   versions and the append function: `schema.ts`; appends and lost connections: `append.ts`;
 *   reads: `read.ts`, and the open's read-through: `copy-out.ts` (its `COPY` read by `copy-stream.ts`); hearing of other writers' appends: `notify.ts`.
 * - **Durable**: an append resolves once its transaction has committed with
 *   `synchronous_commit` on (forced inside the append function), on a server that a writable
 *   open checked runs with `fsync` on.
 * - **Atomic**: a batch is one transaction; a crash, a lost connection or a killed writer leaves
 *   all of it or none.
 * - **Several writers**: each append locks the log's row on the server, checks `expectedHead`
 *   under that lock (a {@link ConflictError} with the head found, writing nothing), and gives
 *   out positions with no gaps, in commit order. A reader never sees a later position before
 *   an earlier one.
 * - **`head`**: the head this log object reached: at its open, after each of its own appends
 *   (which, without `expectedHead`, may land past records of other writers), and at each
 *   `refresh`, which takes it to the database's head. `read(from)` reads up to the
 *   *database's* head when the read starts, so it sees what others appended; `watch` tells of
 *   each new head, whoever appended. `resumePoint()` is at this object's `head`.
 * - **Leases** (`lease.ts`): an advisory lock on a session of its own, which dies with it.
 * - **One writer?** No lock is taken: `severalWriters` is the point. A read-only open runs
 *   every transaction read-only and never writes, not even the schema.
 * - **Unfinished** (`lifecycle.ts`): a log that a copy or gen is filling, or that one left
 *   half-filled, is refused by every open ({@link UnfinishedCopyError}), and by a refresh of a
 *   log open already: never read as a ledger. {@link PostgresBackend.fill} marks it;
 *   {@link PostgresBackend.drop} removes a log.
 * - `repaired` is always `null`: there is no torn tail to cut.
 *
 * @module
 */
import { ConflictError, LogWentBackError } from '../../lib/errors.js';
import type {
  Appended,
  CheckedRecord,
  EventLog,
  HeadWatcher,
  Lease,
  LogBackend,
  LogCapabilities,
  OpenOptions,
  Position,
  RecordCodec,
  ResumePoint,
  Unwatch,
} from '../../lib/log.js';
import { type EntryBatches, StoredLog } from '../../lib/log-base.js';
import { type Answer, UnknownOutcome, Writer } from './append.js';
import { Connector, connectFailure, type ReadPool, serverFailure } from './connection.js';
import { copyOut } from './copy-out.js';
import { takeLease } from './lease.js';
import {
  dropLog,
  type FillKind,
  lookAt,
  markFinished,
  markUnfinished,
  openLockKey,
  refuseUnfinished,
} from './lifecycle.js';
import { watchHead } from './notify.js';
import { decodePassed, lineAt, readPages } from './read.js';
import { checkServer, type LogState, lookToRead, prepareToWrite, stateOf } from './schema.js';
import type { Timeouts } from './timeouts.js';
import { type PostgresPlace, type PostgresServer, placeOf } from './uri.js';

export type { Unwatch } from '../../lib/log.js';
export { type LogPresence, postgresLogPresence } from './exists.js';
export type { FillKind } from './lifecycle.js';
export type { LogState } from './schema.js';
export {
  FORMAT,
  MIGRATIONS,
  type Migration,
  PRE_RELEASE_FORMAT,
  PreReleaseSchemaError,
  SCHEMA_VERSION,
} from './schema.js';
export type { Timeouts } from './timeouts.js';
export { DEFAULT_LOG, DEFAULT_SCHEMA, isPostgresUri, type PostgresServer } from './uri.js';

/** What the PostgreSQL backend can do: several writers, and a watch that tells of their appends ({@link PostgresLog.watch}). */
export interface PostgresCapabilities extends LogCapabilities {
  readonly severalWriters: true;
  readonly watches: true;
  readonly keyedAppends: true;
}

const CAPABILITIES: PostgresCapabilities = {
  durable: true,
  files: false,
  severalWriters: true,
  readsWhileWriting: true,
  atomicBatches: true,
  watches: true,
  keyedAppends: true,
};

/** How to make a PostgreSQL backend. */
export interface PostgresOptions<R> {
  readonly codec: RecordCodec<R>;
  /** How long to wait for the server, in milliseconds (see {@link Timeouts} for the defaults). */
  readonly timeouts?: Timeouts;
}

/** An open PostgreSQL log: an {@link EventLog}, and a way to hear of other writers' appends. */
export interface PostgresLog<R> extends EventLog<R> {
  readonly capabilities: PostgresCapabilities;
  /**
   * Tells `watcher.onHead` of the database's head when the watch starts, then of each higher
   * head as it commits, whoever appended it (this log object too): a wake-up, after which
   * `refresh` and `read` give the records; `onFailure` if the head went back. Resolves once it
   * listens (`notify.ts`).
   * @throws `LedgerIoError` when it cannot listen; a session lost later is made again by itself
   */
  watch(watcher: HeadWatcher): Promise<Unwatch>;
}

/** A log being filled by a copy or gen ({@link PostgresBackend.fill}): marked unfinished until {@link finish}. */
export interface Fill<R> {
  /** The log, whose opens go past the mark: for the fill's appends, and the read that checks them. */
  readonly backend: LogBackend<R>;
  /** Clears the mark: from now on the log is a ledger, which every open reads. */
  finish(): Promise<void>;
}

/** A PostgreSQL log's backend. */
export interface PostgresBackend<R> extends LogBackend<R> {
  readonly capabilities: PostgresCapabilities;
  open(options?: OpenOptions<R>): Promise<PostgresLog<R>>;
  /**
   * For a copy or gen into the log, which must be empty: marks it unfinished, so that every
   * other open refuses it until the fill's {@link Fill.finish}. A fill that never finishes
   * (stopped, killed, its server lost) leaves it refused until it is dropped.
   * @throws `DestinationNotEmptyError` when it holds records; `UnfinishedCopyError` when an earlier fill left it unfinished
   */
  fill(by: FillKind): Promise<Fill<R>>;
  /** The log's head and whether it is unfinished, looked at without writing; `null` when there is no such log. */
  look(): Promise<LogState | null>;
  /**
   * Removes the log, its records and its row, in one transaction.
   * @returns what it removed, or `null` when there was no such log
   * @throws `LockedError` when a writer has the log open (nothing is removed)
   */
  drop(): Promise<LogState | null>;
}

/**
 * The log that `target` names, a URI (`postgres://user@host/db?log=honcho`) or its parts.
 * Nothing is connected to until it is opened.
 * @throws `TargetError` when `target` names no log
 */
export function postgresBackend<R>(target: string | PostgresServer, options: PostgresOptions<R>): PostgresBackend<R> {
  const place = placeOf(target);
  const connector = (): Connector => new Connector(place, false, options.timeouts ?? {});
  return {
    name: place.name,
    capabilities: CAPABILITIES,
    open: (openOptions) => PgLog.open(place, options, openOptions ?? {}, false),
    fill: async (by) => {
      await markUnfinished(connector(), place, by);
      return {
        backend: {
          name: place.name,
          capabilities: CAPABILITIES,
          open: (openOptions) => PgLog.open(place, options, openOptions ?? {}, true),
        },
        finish: () => markFinished(connector(), place, by),
      };
    },
    look: async () => {
      const pool = await new Connector(place, true, options.timeouts ?? {}).pool(1);
      try {
        return await lookAt(pool, place);
      } finally {
        await pool.end();
      }
    },
    drop: () => dropLog(connector(), place),
  };
}

class PgLog<R> extends StoredLog<R> implements PostgresLog<R> {
  declare readonly capabilities: PostgresCapabilities;
  private readonly connector: Connector;
  private pool: ReadPool | null = null;
  /** `null` for a read-only log. */
  private writer: Writer | null = null;
  /** The database's head when the log opened: what the read-through reads. */
  private opened: Position = 0;
  /** The open's {@link OpenOptions.sizeHint}, for the read-through to tell. */
  private sizeHint: OpenOptions<R>['sizeHint'];
  /** The line this log last appended, at `head - 1` (for the resume point's fingerprint); `null` once a refresh moved past it. */
  private lastLine: string | null = null;

  private constructor(
    private readonly place: PostgresPlace,
    private readonly codec: RecordCodec<R>,
    timeouts: Timeouts,
    readOnly: boolean,
    /** Whether this is a fill's open, which reads and writes a log it marked unfinished. */
    private readonly pastMark: boolean,
  ) {
    // several writers: the server's lock on the log's row keeps them apart, not this process
    super({ name: place.name, capabilities: CAPABILITIES, codec, readOnly, writerKey: null });
    this.connector = new Connector(place, readOnly, timeouts);
  }

  static open<R>(
    place: PostgresPlace,
    { codec, timeouts = {} }: PostgresOptions<R>,
    options: OpenOptions<R>,
    pastMark: boolean,
  ): Promise<PgLog<R>> {
    const log = new PgLog(place, codec, timeouts, options.readOnly ?? false, pastMark);
    log.sizeHint = options.sizeHint;
    return log.start(options);
  }

  protected override async _open(): Promise<void> {
    const { connector, place } = this;
    const pool = await connector.pool(2);
    this.pool = pool;
    if (this.readOnly) {
      try {
        await pool.reach(); // the first contact, for its failure to be told as one
      } catch (e) {
        throw connectFailure(place.name, e);
      }
      await checkServer(pool, place, false);
      this.opened = this.checked(await lookToRead(pool, place));
    } else {
      const session = await connector.session('append');
      this.writer = new Writer(connector, place, session);
      await checkServer(session, place, true);
      try {
        // held by the session while the log is open: a drop is refused meanwhile (lifecycle.ts)
        await session.query(`SELECT pg_advisory_lock_shared(${openLockKey(place)})`);
      } catch (e) {
        throw serverFailure(place.name, 'taking the lock that keeps a drop out', e);
      }
      this.opened = this.checked(await prepareToWrite(session, place));
    }
  }

  /** The head of `state`, unless the log is unfinished and this is not its fill's open. */
  private checked(state: LogState): Position {
    if (!this.pastMark) refuseUnfinished(this.place, state);
    return state.head;
  }

  private get readPool(): ReadPool {
    return this.pool as ReadPool; // made by the open, before anything reads
  }

  protected _storedBefore({ position }: ResumePoint): Promise<string | undefined> | undefined {
    return position > this.opened ? undefined : lineAt(this.readPool, this.place, position - 1);
  }

  protected _entries(from: Position): EntryBatches<R> {
    const hint = this.sizeHint;
    this.sizeHint = undefined;
    return copyOut(this.readPool, this.place, this.codec, from, this.opened, hint);
  }

  /**
   * One batch, one statement: the server checks `expectedHead` (and that the log did not go
   * back) under the log's lock, or with `keys` that the records past it are of other keys, and
   * says where the batch went, with the records it went past.
   */
  protected async _append(
    _records: readonly R[],
    expectedHead: Position | undefined,
    keys: readonly string[] | undefined,
    checked: readonly CheckedRecord<R>[],
  ): Promise<Appended<R>> {
    const writer = this.writer as Writer; // a writable log has its writer
    const lines = checked.map((record) => record.line);
    let answer: Answer;
    try {
      answer = await writer.append(lines, expectedHead ?? null, this.head, keys ?? null);
    } catch (e) {
      if (!(e instanceof UnknownOutcome)) throw e;
      this.stop(e.failure);
      throw e.failure;
    }
    if (!answer.ok && answer.head < this.head) {
      const wentBack = new LogWentBackError(this.name, this.head, `it holds ${answer.head} records`);
      this.stop(wentBack);
      throw wentBack;
    }
    if (!answer.ok) throw new ConflictError(this.name, expectedHead as Position, answer.head);
    if (answer.head >= this.head) this.lastLine = lines[lines.length - 1] as string;
    if (answer.passed === null || expectedHead === undefined) return { from: answer.from, head: answer.head };
    const { records: passed, damage } = decodePassed(
      this.place,
      this.codec,
      expectedHead,
      answer.from - expectedHead,
      answer.passed,
    );
    // The batch is committed: it is appended, whatever it went past. After a line that is not a
    // record nothing can be trusted: the log stops, and `passed` ends before that line, so
    // that the caller sees it is short of `from` and stops too.
    if (damage !== null) this.stop(damage);
    return { from: answer.from, head: answer.head, passed };
  }

  /** Up to `to`, or the database's head when the read starts: what other writers appended too. */
  protected async *_read(from: Position, to: Position | undefined): AsyncIterable<R[]> {
    let end = to ?? Number.POSITIVE_INFINITY;
    // below this log's head, every position is there: no need to ask where the log ends
    if (end > this.head) end = Math.min(end, Math.max(this.head, await this.databaseHead()));
    yield* readPages(this.readPool, this.place, this.codec, from, end);
  }

  private async databaseHead(): Promise<Position> {
    let state: LogState;
    try {
      state = await stateOf(this.readPool, this.place);
    } catch (e) {
      throw serverFailure(this.name, 'reading the head', e);
    }
    // marked since this log opened (a copy began filling it while it was empty): not a ledger
    return this.checked(state);
  }

  /** The database's head; the base moves `head` there, unless it is lower (the log went back). */
  protected override async _storedHead(): Promise<Position> {
    const found = await this.databaseHead();
    if (found !== this.head) this.lastLine = null;
    return found;
  }

  protected _storedLast(): string | Promise<string | undefined> {
    return this.lastLine ?? lineAt(this.readPool, this.place, this.head - 1);
  }

  watch(watcher: HeadWatcher): Promise<Unwatch> {
    return this.watching(watcher, (told) => watchHead(this.connector, this.place, told));
  }

  /** An advisory lock on a session of its own: one holder among every process on the log. */
  protected override _lease(name: string): Promise<Lease | null> {
    return takeLease(this.connector, this.place, name);
  }

  protected async _close(): Promise<void> {
    await this.writer?.close();
    await this.pool?.end();
  }
}
