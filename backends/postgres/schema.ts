/**
 * The tables and the append procedure (their SQL: `sql/v1.sql`; their versions: `versions.ts`),
 * the opens' look at them, and the checks of the server a log is opened on.
 *
 * Everything lives in one schema (`ledgerstore` unless the target says otherwise), shared by
 * every log of the database; a log is a row of `logs` and its records are rows of `records`:
 *
 * | table | one row per | columns |
 * |---|---|---|
 * | `meta` | format (one row) | `format` = `ledgerstore/postgres`, `version` |
 * | `logs` | log | `name`, `head`: the number of records, moved only by `append`; `unfinished`: what fills it (`copy`, `gen`) while a copy or gen does, else null |
 * | `records` | record | `log`, `position` (from 0, no gaps), `line`: the record's canonical line, as `text`; `batch`: on a batch's first record, the uuid the client made for it (else null); `key`: a hash of the record's key |
 * | `waiting` (unlogged) | batch waiting for the append lock | the call's arguments, then its answer |
 *
 * `append(log, expected, known, batch, count, lines, keys)` is the only writer: a procedure,
 * its lines one text, joined by newlines, with their count, whose commits hold the log's append
 * lock, an advisory lock, through their WAL flush. A call
 * that gets it at once commits the batches waiting for it and then its own (in one statement
 * when none waits and the head is where it expected: the common turn); one that finds it
 * held puts its batch in `waiting` (unlogged: that commit has no WAL to flush), commits, and
 * waits for the lock: by then the holder's next commit, or the first waiter's, has usually
 * written it with every other waiting batch, in the order they came, with one flush for all
 * (else it commits them itself). Each batch is placed at the head its turn finds, only where
 * that head is `expected` (if given) and at least `known` (the head the writer had reached: a
 * log below it went back); else it writes nothing and returns `ok = false` and the head. With `keys` (one
 * a line), a head up to {@link MAX_PASSED} past `expected` is taken too when none of the records
 * in between has one of those keys or none (`records.key`, a hash of each record's key): the
 * batch goes after them, and they are returned (`passed`), for the writer to take in before its
 * own. It inserts the lines at `head ... head + n - 1`, the batch id with the first, notifies the channel
 * `<schema>.<log>` with the new head, and forces `synchronous_commit` on for its transaction.
 * Because every commit of appends to a log holds the lock until it is flushed, positions are
 * given out in commit order and a reader that sees position p sees every position below it. (A
 * table of batch ids whose row was locked before the head's update cost 709 bytes of WAL a
 * one-record commit; the id on the batch's first record, about 450.)
 *
 * The schema is made by the first writable open, in one transaction behind an advisory lock
 * (two processes starting at once would otherwise race on `CREATE`). Its version is in `meta`:
 * a writable open of an older version applies the migrations after it, in order, in that same
 * transaction; a version this ledgerstore does not know (a newer one), or a pre-release
 * schema, is refused, and nothing is changed. A read-only open looks and never writes: a
 * database with no schema, or no row for the log, is an empty log.
 *
 * @module
 */
import { DamagedError, LedgerError, LedgerIoError } from '../../lib/errors.js';
import type { Position } from '../../lib/log.js';
import { type Queryable, serverFailure, sqlState } from './connection.js';
import { identifier } from './sql-text.js';
import type { PostgresPlace } from './uri.js';
import { migrate, otherVersion, SCHEMA_VERSION, versionOf } from './versions.js';

export { appendLockKey, batchLockKey, identifier, literal, MAX_PASSED, WAITED_STATE } from './sql-text.js';
export {
  FORMAT,
  MIGRATIONS,
  type Migration,
  migrate,
  otherVersion,
  PRE_RELEASE_FORMAT,
  PreReleaseSchemaError,
  SCHEMA_VERSION,
  versionOf,
} from './versions.js';

/** The channel on which `append` tells of a log's new head. */
export function channelOf(place: PostgresPlace): string {
  return `${place.schema}.${place.log}`;
}

/** A bigint column, which node-postgres gives as text, as a position. */
export function positionOf(name: string, value: unknown): Position {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new DamagedError(name, 0, `the database gives ${String(value)} as a position, which is not one`);
  return n;
}

/** The failure of an open whose server or role cannot hold a log, said plainly. */
function refusal(name: string, why: string): LedgerIoError {
  return new LedgerIoError(name, new Error(why));
}

/**
 * Checks the server before anything is read: its encoding (records are UTF-8 text), and for
 * writing that it syncs (`fsync`) and accepts writes (not a standby).
 * @throws {@link LedgerIoError} saying what is wrong and what to do
 */
export async function checkServer(db: Queryable, place: PostgresPlace, writable: boolean): Promise<void> {
  let row: { encoding: string; fsync: string; recovery: boolean; readonly: string } | undefined;
  try {
    ({
      rows: [row],
    } = await db.query<{ encoding: string; fsync: string; recovery: boolean; readonly: string }>(
      `SELECT current_setting('server_encoding') AS encoding, current_setting('fsync') AS fsync,
              pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS readonly`,
    ));
  } catch (e) {
    throw serverFailure(place.name, 'looking at the server', e);
  }
  if (row === undefined) throw refusal(place.name, 'the server did not say what it is');
  if (row.encoding !== 'UTF8') {
    throw refusal(
      place.name,
      `the database's encoding is ${row.encoding}; ledgerstore stores records as UTF-8 text and needs a UTF8 database (createdb -E UTF8)`,
    );
  }
  if (!writable) return;
  if (row.fsync !== 'on') {
    throw refusal(
      place.name,
      'the server runs with fsync=off, so an acknowledged append would not survive a crash of its machine; turn fsync on, or open the ledger read-only',
    );
  }
  if (row.recovery || row.readonly === 'on') {
    throw refusal(
      place.name,
      'the server accepts only reads (a standby, or default_transaction_read_only); connect to the primary, or open the ledger read-only',
    );
  }
}

/**
 * For a writable open, in one transaction: makes the schema, or migrates it, checks that the
 * role may write the log, and adds the log's row. Gives the log's {@link LogState}. On any
 * refusal the transaction rolls back and nothing is changed.
 * @throws {@link DamagedError} for a schema of another version; {@link LedgerIoError} for a role that may not write, or a server failure
 */
export async function prepareToWrite(db: Queryable, place: PostgresPlace): Promise<LogState> {
  const s = identifier(place.schema);
  let doing = 'opening a transaction';
  try {
    await db.query('BEGIN');
    try {
      doing = 'waiting for the schema lock';
      await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`ledgerstore schema ${place.schema}`]);
      doing = `looking at the schema ${place.schema}`;
      const version = await versionOf(db, place);
      if (version !== null && version > SCHEMA_VERSION) throw otherVersion(place, version, true);
      await migrate(db, place, version);
      doing = 'checking the role';
      await checkMayWrite(db, place);
      doing = `adding the log ${place.log}`;
      await db.query(`INSERT INTO ${s}.logs (name) VALUES ($1) ON CONFLICT DO NOTHING`, [place.log]);
      // answers that no writer came back for (one killed while it waited): no call waits an hour
      await db.query(`DELETE FROM ${s}.waiting WHERE log = $1 AND ok IS NOT NULL AND at < now() - interval '1 hour'`, [
        place.log,
      ]);
      const state = await stateOf(db, place);
      doing = 'committing';
      await db.query('COMMIT');
      return state;
    } catch (e) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    throw serverFailure(place.name, doing, e);
  }
}

/** Refuses a role that lacks a privilege an append needs, naming each. */
async function checkMayWrite(db: Queryable, place: PostgresPlace): Promise<void> {
  const s = identifier(place.schema);
  const needs: readonly [string, string, string][] = [
    ['table', `${s}.logs`, 'INSERT'],
    ['table', `${s}.logs`, 'UPDATE'],
    ['table', `${s}.records`, 'INSERT'],
    ['table', `${s}.waiting`, 'INSERT'],
    ['table', `${s}.waiting`, 'UPDATE'],
    ['table', `${s}.waiting`, 'DELETE'],
    [
      'function',
      `${s}.append(text, bigint, bigint, uuid, integer, text, text[], boolean, bigint, bigint, text)`,
      'EXECUTE',
    ],
  ];
  const {
    rows: [row],
  } = await db.query<{ role: string; has: boolean[] }>(
    `SELECT current_user AS role, ARRAY[${needs.map(([kind], n) => `has_${kind}_privilege($${2 * n + 1}, $${2 * n + 2})`).join(', ')}] AS has`,
    needs.flatMap(([, object, privilege]) => [object, privilege]),
  );
  const missing = needs
    .filter((_, n) => row?.has[n] !== true)
    .map(([, object, privilege]) => `${privilege} on ${object}`);
  if (missing.length > 0) {
    throw refusal(
      place.name,
      `the role ${row?.role ?? '?'} may not write this log: it lacks ${missing.join(', ')}; open the ledger read-only, or grant them (see docs/postgres.md, "Roles")`,
    );
  }
}

/**
 * For a read-only open: looks, writes nothing. Gives the log's {@link LogState}, head 0 when the database has no
 * ledgerstore schema or no such log.
 * @throws {@link DamagedError} for a schema of another version
 */
export async function lookToRead(db: Queryable, place: PostgresPlace): Promise<LogState> {
  try {
    const version = await versionOf(db, place);
    if (version === null) return { head: 0, unfinished: null };
    if (version !== SCHEMA_VERSION) throw otherVersion(place, version, false);
    return await stateOf(db, place);
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    throw serverFailure(place.name, `looking at the schema ${place.schema}`, e);
  }
}

/** A log's row: its head, and what fills it while a copy or gen does (`null` once it is a ledger). */
export interface LogState {
  readonly head: Position;
  readonly unfinished: string | null;
}

/**
 * The log's head in the database now; 0 when it has no row, or (for a reader that opened
 * before any writer made the schema) no table.
 */
export async function headOf(db: Queryable, place: PostgresPlace): Promise<Position> {
  return (await stateOf(db, place)).head;
}

/** The log's {@link LogState} in the database now: as {@link headOf}, and whether it is unfinished. */
export async function stateOf(db: Queryable, place: PostgresPlace): Promise<LogState> {
  try {
    const {
      rows: [row],
    } = await db.query<{ head: string; unfinished: string | null }>(
      `SELECT head, unfinished FROM ${identifier(place.schema)}.logs WHERE name = $1`,
      [place.log],
    );
    return row === undefined
      ? { head: 0, unfinished: null }
      : { head: positionOf(place.name, row.head), unfinished: row.unfinished };
  } catch (e) {
    if (sqlState(e) === '42P01') return { head: 0, unfinished: null };
    throw e;
  }
}
