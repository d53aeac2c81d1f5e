/**
 * Whether a PostgreSQL log is there, for a caller that must not take a typo for an empty log
 * (the CLI's read-only commands): a read-only open reads a database with no schema, or with no
 * row for the log, as an empty log, and a writable one makes them. This only looks, on a
 * read-only session: it makes neither.
 *
 * @module
 */

import { Connector, connectFailure, type Queryable, serverFailure } from './connection.js';
import { identifier } from './schema.js';
import type { Timeouts } from './timeouts.js';
import type { PostgresPlace, PostgresServer } from './uri.js';
import { placeOf } from './uri.js';

/** What a look found: the log's row in `logs`, no such row, or no ledgerstore tables in the schema at all; and where it looked. */
export interface LogPresence {
  readonly found: 'there' | 'no log' | 'no schema';
  readonly log: string;
  readonly schema: string;
}

/** Whether the schema has a `logs` table and, in it, the log's row. */
async function presenceIn(db: Queryable, place: PostgresPlace): Promise<LogPresence['found']> {
  const s = identifier(place.schema);
  const {
    rows: [table],
  } = await db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [`${s}.logs`]);
  if (table?.present !== true) return 'no schema';
  const { rows } = await db.query(`SELECT 1 FROM ${s}.logs WHERE name = $1`, [place.log]);
  return rows.length > 0 ? 'there' : 'no log';
}

/**
 * Whether the log that `target` names is in its database: its row in the schema's `logs` table
 * (made by the first writable open, before any record). Connects once, read-only, within the
 * {@link Timeouts}' waits, and changes nothing.
 * @throws `TargetError` when `target` names no log
 * @throws `LedgerIoError` when the server cannot be reached or refuses
 */
export async function postgresLogPresence(
  target: string | PostgresServer,
  timeouts: Timeouts = {},
): Promise<LogPresence> {
  const place = placeOf(target);
  const pool = await new Connector(place, true, timeouts).pool(1);
  try {
    try {
      await pool.reach();
    } catch (e) {
      throw connectFailure(place.name, e);
    }
    try {
      return { found: await presenceIn(pool, place), log: place.log, schema: place.schema };
    } catch (e) {
      throw serverFailure(place.name, `looking for the log ${place.log} in the schema ${place.schema}`, e);
    }
  } finally {
    await pool.end();
  }
}
