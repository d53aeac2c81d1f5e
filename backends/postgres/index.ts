/**
 * The PostgreSQL backend: a log of records in a PostgreSQL database that several writers, in
 * several processes on several machines, append to at once, each with `expectedHead`.
 *
 * ```ts
 * const backend = postgresBackend('postgres://bx@db.example/bx?log=honcho', { codec: honchoCodec });
 * const ledger = await Ledger.open(backend); // or Ledger.open('postgres://...') for Honcho records
 * ```
 *
 * - **Where**: see `uri.ts` (a node-postgres URI plus `log=` and `schema=`); the schema, its
 *   versions and the append function: `schema.ts`; appends and lost connections: `append.ts`;
 *   reads: `read.ts`; hearing of other writers' appends: `notify.ts`.
 * - **Durable**: an append resolves once its transaction has committed with
 *   `synchronous_commit` on (forced inside the append function), on a server that a writable
 *   open checked runs with `fsync` on.
 * - **Atomic**: a batch is one transaction; a crash, a lost connection or a killed writer leaves
 *   all of it or none.
 * - **Several writers**: each append locks the log's row on the server, checks `expectedHead`
 *   under that lock (a {@link ConflictError} with the head found, writing nothing), and gives
 *   out positions with no gaps, in commit order. A reader never sees a later position before
 *   an earlier one.
 * - **`head`**: the head this log object reached: at its open, and after each of its own
 *   appends (which may land past records of other writers). `read(from)` reads up to the
 *   *database's* head when the read starts, so it sees what others appended; `watch` tells of
 *   each new head, whoever appended. `resumePoint()` is at this object's `head`.
 * - **One writer?** No lock is taken: `severalWriters` is the point. A read-only open runs
 *   every transaction read-only and never writes, not even the schema.
 * - `repaired` is always `null`: there is no torn tail to cut.
 *
 * @module
 */
import { ClosedError, ConflictError, DamagedError, type LedgerError, ReadOnlyError, ResumeMismatchError, StoppedError, asDamage } from '../../lib/errors.js';
import { fingerprintOf } from '../../lib/fingerprint.js';
import type { AppendOptions, Appended, EventLog, LogBackend, LogCapabilities, OpenOptions, Position, RecordCodec, ResumePoint } from '../../lib/log.js';
import { UnknownOutcome, Writer } from './append.js';
import { Connector, type ReadPool, connectFailure, serverFailure } from './connection.js';
import { type Unwatch, watchHead } from './notify.js';
import { lineAt, readPages } from './read.js';
import { checkServer, headOf, lookToRead, prepareToWrite } from './schema.js';
import type { Timeouts } from './timeouts.js';
import { type PostgresPlace, type PostgresServer, placeOf } from './uri.js';

export { DEFAULT_LOG, DEFAULT_SCHEMA, type PostgresServer, isPostgresUri } from './uri.js';
export { FORMAT, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
export type { Timeouts } from './timeouts.js';
export type { Unwatch } from './notify.js';

/**
 * What the PostgreSQL backend can do: the contract's capabilities, and `watches`, the addition
 * it proposes: the log tells of records that other writers appended ({@link PostgresLog.watch}).
 */
export interface PostgresCapabilities extends LogCapabilities {
  readonly watches: true;
}

const CAPABILITIES: PostgresCapabilities = { durable: true, files: false, severalWriters: true, readsWhileWriting: true, atomicBatches: true, watches: true };

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
   * Calls `onHead` with the database's head when the watch starts, then with each higher head
   * as it commits, whoever appended it (this log object too): a wake-up, after which
   * `read(from)` gives the records. Resolves once it listens.
   * @throws `LedgerIoError` when it cannot listen; a session lost later is made again by itself
   */
  watch(onHead: (head: Position) => void): Promise<Unwatch>;
}

/** A PostgreSQL log's backend. */
export interface PostgresBackend<R> extends LogBackend<R> {
  readonly capabilities: PostgresCapabilities;
  open(options?: OpenOptions<R>): Promise<PostgresLog<R>>;
}

/**
 * The log that `target` names, a URI (`postgres://user@host/db?log=honcho`) or its parts.
 * Nothing is connected to until it is opened.
 * @throws `TargetError` when `target` names no log
 */
export function postgresBackend<R>(target: string | PostgresServer, options: PostgresOptions<R>): PostgresBackend<R> {
  const place = placeOf(target);
  return {
    name: place.name,
    capabilities: CAPABILITIES,
    open: (openOptions) => PgLog.open(place, options, openOptions ?? {}),
  };
}

class PgLog<R> implements PostgresLog<R> {
  readonly capabilities = CAPABILITIES;
  readonly repaired = null;
  readonly name: string;
  private closed = false;
  private stopped: LedgerError | null = null;
  /** The last append in call order, settled: the next one starts after it. */
  private tail: Promise<unknown> = Promise.resolve();
  /** The line this log last appended, at `head - 1` (for the resume point's fingerprint). */
  private lastLine: string | null = null;
  private readonly watches = new Set<Unwatch>();

  private constructor(
    private readonly place: PostgresPlace,
    private readonly codec: RecordCodec<R>,
    private readonly connector: Connector,
    private readonly pool: ReadPool,
    /** `null` for a read-only log. */
    private readonly writer: Writer | null,
    private count: Position,
  ) {
    this.name = place.name;
  }

  static async open<R>(place: PostgresPlace, { codec, timeouts = {} }: PostgresOptions<R>, { readOnly = false, replay, resume }: OpenOptions<R>): Promise<PgLog<R>> {
    const connector = new Connector(place, readOnly, timeouts);
    const pool = await connector.pool(2);
    let writer: Writer | null = null;
    try {
      let head: Position;
      if (readOnly) {
        try {
          await pool.reach(); // the first contact, for its failure to be told as one
        } catch (e) {
          throw connectFailure(place.name, e);
        }
        await checkServer(pool, place, false);
        head = await lookToRead(pool, place);
      } else {
        const session = await connector.session('append');
        writer = new Writer(connector, place, session);
        await checkServer(session, place, true);
        head = await prepareToWrite(session, place);
      }
      let position = resume === undefined ? 0 : await checkResume(pool, place, resume, head);
      for await (const records of readPages(pool, place, codec, position, head)) {
        for (const record of records) {
          try {
            const replayed = replay?.(record, position);
            if (replayed instanceof Promise) await replayed;
          } catch (e) {
            throw asDamage(place.name, position + 1, e);
          }
          position++;
        }
      }
      return new PgLog(place, codec, connector, pool, writer, head);
    } catch (e) {
      await writer?.close();
      await pool.end();
      throw e;
    }
  }

  get head(): Position {
    return this.count;
  }

  append(records: readonly R[], { expectedHead }: AppendOptions = {}): Promise<Appended> {
    if (this.closed) return Promise.reject(new ClosedError(this.name));
    if (this.writer === null) return Promise.reject(new ReadOnlyError(this.name));
    let lines: string[];
    try {
      lines = records.map((record) => this.codec.encode(this.codec.normalize(record)));
    } catch (e) {
      return Promise.reject(e);
    }
    const writer = this.writer;
    const appended = this.tail.then(() => this.write(writer, lines, expectedHead));
    this.tail = appended.catch(() => undefined);
    return appended;
  }

  /** One append's turn, after every earlier append of this log object. */
  private async write(writer: Writer, lines: readonly string[], expectedHead: Position | undefined): Promise<Appended> {
    if (this.stopped !== null) throw new StoppedError(this.name, this.stopped);
    if (lines.length === 0) {
      // nothing to write, so nothing to wait for: the head this log knows is the answer
      if (expectedHead !== undefined && expectedHead !== this.count) throw new ConflictError(this.name, expectedHead, this.count);
      return { from: this.count, head: this.count };
    }
    let answer;
    try {
      answer = await writer.append(lines, expectedHead ?? null);
    } catch (e) {
      if (!(e instanceof UnknownOutcome)) throw e;
      this.stopped = e.failure;
      throw e.failure;
    }
    if (!answer.ok) throw new ConflictError(this.name, expectedHead as Position, answer.head);
    if (answer.head >= this.count) {
      this.count = answer.head;
      this.lastLine = lines[lines.length - 1] as string;
    }
    return { from: answer.from, head: answer.head };
  }

  async *read(from: Position = 0): AsyncIterable<R> {
    if (this.closed) throw new ClosedError(this.name);
    let end: Position;
    try {
      end = Math.max(this.count, await headOf(this.pool, this.place));
    } catch (e) {
      throw this.closed ? new ClosedError(this.name) : serverFailure(this.name, 'reading the head', e);
    }
    try {
      for await (const records of readPages(this.pool, this.place, this.codec, Math.max(0, Math.ceil(from)), end)) {
        if (this.closed) throw new ClosedError(this.name);
        yield* records;
        if (this.closed) throw new ClosedError(this.name);
      }
    } catch (e) {
      // the pool is ended under a read by this log's close
      throw this.closed && !(e instanceof DamagedError) ? new ClosedError(this.name) : e;
    }
  }

  async resumePoint(): Promise<ResumePoint> {
    if (this.closed) throw new ClosedError(this.name);
    await this.tail; // the head after every append called so far
    const position = this.count;
    if (position === 0) return { position: 0, cursor: null, fingerprint: '' };
    const line = this.lastLine ?? (await lineAt(this.pool, this.place, position - 1));
    if (line === undefined) throw new DamagedError(this.name, position, `record ${position} is missing`);
    return { position, cursor: null, fingerprint: fingerprintOf(line) };
  }

  async watch(onHead: (head: Position) => void): Promise<Unwatch> {
    if (this.closed) throw new ClosedError(this.name);
    const unwatch = await watchHead(this.connector, this.place, onHead);
    const once: Unwatch = async () => {
      if (this.watches.delete(once)) await unwatch();
    };
    this.watches.add(once);
    return once;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail; // appends called before close go through
    await Promise.all([...this.watches].map((unwatch) => unwatch()));
    await this.writer?.close();
    await this.pool.end();
  }
}

/**
 * Checks that the log still holds, right before `resume`'s position, the record it held, and
 * gives the position to read from.
 * @throws {@link ResumeMismatchError} when it does not
 */
async function checkResume(pool: ReadPool, place: PostgresPlace, resume: ResumePoint, head: Position): Promise<Position> {
  if (resume.position === 0) return 0;
  if (resume.position > head) throw new ResumeMismatchError(place.name, resume.position, `the log holds ${head} records`);
  const line = await lineAt(pool, place, resume.position - 1);
  if (line === undefined) throw new ResumeMismatchError(place.name, resume.position, `the log holds no record ${resume.position}`);
  if (fingerprintOf(line) !== resume.fingerprint) throw new ResumeMismatchError(place.name, resume.position, 'the record before it is not the one it was');
  return resume.position;
}
