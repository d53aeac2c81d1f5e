/**
 * A log's beginning and end, besides its appends: a copy's (or gen's) mark on the log it fills,
 * and the removal of a log (`ledgerstore drop`).
 *
 * - **Unfinished.** A copy into a PostgreSQL log writes it in place, batch by batch: killed
 *   half-way, it would leave a log that reads as a good ledger of part of its source. So the copy
 *   first marks the log, which must be empty, unfinished (`logs.unfinished`, what fills it), in
 *   the statement that finds it empty; clears the mark once its last record is written and
 *   checked; and every other open refuses a marked log ({@link UnfinishedCopyError}), as does a
 *   log already open that meets the mark at a refresh. Only the fill's own opens go past it.
 * - **Writers.** A writable open holds a shared advisory lock on its log for its session
 *   ({@link openLockKey}); a drop takes it exclusively, for its transaction, or is refused: a
 *   log is never removed under a writer that has it open. (A writer whose session was lost and
 *   made again holds it no more: its next append then finds no log, and fails.)
 * - **Drop.** One transaction: the log's records, its waiting batches and its row.
 *
 * @module
 */
import {
  DestinationNotEmptyError,
  LedgerError,
  LedgerIoError,
  LockedError,
  UnfinishedCopyError,
} from '../../lib/errors.js';
import type { Position } from '../../lib/log.js';
import { type Connector, type Queryable, serverFailure } from './connection.js';
import {
  appendLockKey,
  checkServer,
  identifier,
  type LogState,
  literal,
  otherVersion,
  positionOf,
  prepareToWrite,
  SCHEMA_VERSION,
  stateOf,
  versionOf,
} from './schema.js';
import type { PostgresPlace } from './uri.js';

/** What fills an unfinished log: the command whose words the refusal uses. */
export type FillKind = 'copy' | 'gen';

/** The key of the lock that a writable open holds shared, and a drop exclusively, as SQL. */
export function openLockKey(place: PostgresPlace): string {
  return `hashtextextended(${literal(`ledgerstore open ${place.schema}.${place.log}`)}, 0)`;
}

/** @throws {@link UnfinishedCopyError} when `state` is of an unfinished log */
export function refuseUnfinished(place: PostgresPlace, state: LogState): void {
  if (state.unfinished !== null) throw new UnfinishedCopyError(place.name, state.unfinished, state.head);
}

/**
 * Marks the log, which must be empty and finished, unfinished by `by`, making the schema and
 * the log's row first as a writable open does.
 * @throws {@link DestinationNotEmptyError} when it holds records; {@link UnfinishedCopyError} when it is marked already
 */
export async function markUnfinished(connector: Connector, place: PostgresPlace, by: FillKind): Promise<void> {
  const session = await connector.session('append');
  try {
    await checkServer(session, place, true);
    const state = await prepareToWrite(session, place);
    refuseUnfinished(place, state);
    if (state.head > 0) throw new DestinationNotEmptyError(place.name, state.head);
    let marked: number;
    try {
      // in the statement that finds it empty: a writer that got in meanwhile is seen
      marked =
        (
          await session.query(
            `UPDATE ${identifier(place.schema)}.logs SET unfinished = $2 WHERE name = $1 AND head = 0 AND unfinished IS NULL`,
            [place.log, by],
          )
        ).rowCount ?? 0;
    } catch (e) {
      throw serverFailure(place.name, `marking the log ${place.log} unfinished`, e);
    }
    if (marked === 0) {
      const now = await stateOf(session, place);
      refuseUnfinished(place, now);
      throw new DestinationNotEmptyError(place.name, now.head);
    }
  } finally {
    await session.end();
  }
}

/**
 * Clears the mark of {@link markUnfinished}: from now on the log is a ledger.
 * @throws {@link LedgerIoError} when the log is not marked by `by` any more (it was dropped meanwhile), or the server fails
 */
export async function markFinished(connector: Connector, place: PostgresPlace, by: FillKind): Promise<void> {
  const session = await connector.session('append');
  try {
    let cleared: number;
    try {
      cleared =
        (
          await session.query(
            `UPDATE ${identifier(place.schema)}.logs SET unfinished = NULL WHERE name = $1 AND unfinished = $2`,
            [place.log, by],
          )
        ).rowCount ?? 0;
    } catch (e) {
      throw serverFailure(place.name, `marking the log ${place.log} finished`, e);
    }
    if (cleared === 0)
      throw new LedgerIoError(
        place.name,
        new Error(`the log ${place.log} is no longer the one this ${by} marked unfinished (it was dropped meanwhile)`),
      );
  } finally {
    await session.end();
  }
}

/** The log's state, looked at without writing; `null` when there is no such log (or no schema). */
export async function lookAt(db: Queryable, place: PostgresPlace): Promise<LogState | null> {
  try {
    const version = await versionOf(db, place);
    if (version === null) return null;
    const {
      rows: [row],
    } = await db.query<{ head: string; unfinished: string | null }>(
      `SELECT head, unfinished FROM ${identifier(place.schema)}.logs WHERE name = $1`,
      [place.log],
    );
    return row === undefined ? null : { head: positionOf(place.name, row.head), unfinished: row.unfinished };
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    throw serverFailure(place.name, `looking at the log ${place.log}`, e);
  }
}

/**
 * Removes the log in one transaction: its records, its waiting batches and its row. Refused,
 * changing nothing, while a writer has it open (or appends to it), and for a schema of another
 * version (a writable open migrates it first).
 * @returns what it removed, or `null` when there is no such log
 * @throws {@link LockedError} when a writer has the log open
 */
export async function dropLog(connector: Connector, place: PostgresPlace): Promise<LogState | null> {
  const s = identifier(place.schema);
  const session = await connector.session('append');
  let doing = 'opening a transaction';
  try {
    await session.query('BEGIN');
    try {
      doing = `looking at the schema ${place.schema}`;
      const version = await versionOf(session, place);
      if (version === null) return null;
      if (version !== SCHEMA_VERSION) throw otherVersion(place, version, true);
      doing = 'looking for writers';
      const {
        rows: [free],
      } = await session.query<{ open: boolean; appending: boolean }>(
        `SELECT pg_try_advisory_xact_lock(${openLockKey(place)}) AS open, pg_try_advisory_xact_lock(${appendLockKey(place.schema, '$1')}) AS appending`,
        [place.log],
      );
      if (free?.open !== true || free.appending !== true) throw new LockedError(place.name);
      doing = `removing the log ${place.log}`;
      const {
        rows: [row],
      } = await session.query<{ head: string; unfinished: string | null }>(
        `SELECT head, unfinished FROM ${s}.logs WHERE name = $1 FOR UPDATE`,
        [place.log],
      );
      if (row === undefined) return null;
      const head: Position = positionOf(place.name, row.head);
      await session.query(`DELETE FROM ${s}.records WHERE log = $1`, [place.log]);
      await session.query(`DELETE FROM ${s}.waiting WHERE log = $1`, [place.log]);
      await session.query(`DELETE FROM ${s}.logs WHERE name = $1`, [place.log]);
      doing = 'committing';
      await session.query('COMMIT');
      return { head, unfinished: row.unfinished };
    } finally {
      // after a COMMIT, a no-op (a warning): before it, nothing was changed
      await session.query('ROLLBACK').catch(() => undefined);
    }
  } catch (e) {
    if (e instanceof LedgerError) throw e;
    throw serverFailure(place.name, doing, e);
  } finally {
    await session.end();
  }
}
