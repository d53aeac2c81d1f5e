/**
 * Reading a log's records: by key, a page at a time, each page asked for while the one before
 * is decoded. No transaction or cursor is held across pages (a long-held snapshot keeps vacuum
 * and the notification queue from being cleaned up), and none is needed: positions are given
 * out under the log's row lock in commit order, so every position below a head that was read
 * is committed, and a page reads the same rows whenever it is asked for.
 *
 * A position missing below the head, or a line that does not decode to a record, is damage at
 * that record (counted from 1, as a line is).
 *
 * @module
 */
import { DamagedError, asDamage } from '../../lib/errors.js';
import type { Position, RecordCodec } from '../../lib/log.js';
import { type Queryable, serverFailure } from './connection.js';
import { identifier, positionOf } from './schema.js';
import type { PostgresPlace } from './uri.js';

/** Records per page: large enough that a round trip is a small part of a page's cost. */
export const PAGE = 4000;

interface Row {
  readonly position: string;
  readonly line: string;
}

/**
 * The records at positions `[from, end)`, a page at a time, in order.
 * @throws {@link DamagedError} at a missing position or a line that is not a record
 * @throws `LedgerIoError` when the server fails
 */
export async function* readPages<R>(db: Queryable, place: PostgresPlace, codec: RecordCodec<R>, from: Position, end: Position): AsyncGenerator<R[]> {
  const text = `SELECT position, line FROM ${identifier(place.schema)}.records WHERE log = $1 AND position >= $2 AND position < $3 ORDER BY position`;
  const page = (start: Position): Promise<readonly Row[]> =>
    db.query<Row>(text, [place.log, start, Math.min(start + PAGE, end)]).then(
      ({ rows }) => rows,
      (e: unknown) => Promise.reject(serverFailure(place.name, `reading records ${start + 1} to ${Math.min(start + PAGE, end)}`, e)),
    );
  let next = from < end ? page(from) : null;
  for (let start = from; next !== null; start += PAGE) {
    const rows = await next;
    next = start + PAGE < end ? page(start + PAGE) : null;
    next?.catch(() => undefined); // awaited on the next turn; a reader that stops here must not leave it unheard
    const records: R[] = new Array<R>(rows.length);
    let position = start;
    for (const row of rows) {
      if (positionOf(place.name, row.position) !== position) break;
      records[position - start] = decodeLine(place.name, codec, row.line, position);
      position++;
    }
    const expected = Math.min(start + PAGE, end);
    if (position < expected) throw new DamagedError(place.name, position + 1, `record ${position + 1} is missing: the log's head is ${end}`);
    yield records;
  }
}

/** The record a stored line holds; damage at `position` when it holds none. */
export function decodeLine<R>(name: string, codec: RecordCodec<R>, line: string, position: Position): R {
  const bytes = Buffer.from(line, 'utf8');
  try {
    return codec.decode(bytes, 0, bytes.length);
  } catch (e) {
    throw asDamage(name, position + 1, e);
  }
}

/** The stored line at `position`, or `undefined` when there is none. */
export async function lineAt(db: Queryable, place: PostgresPlace, position: Position): Promise<string | undefined> {
  try {
    const { rows: [row] } = await db.query<{ line: string }>(`SELECT line FROM ${identifier(place.schema)}.records WHERE log = $1 AND position = $2`, [place.log, position]);
    return row?.line;
  } catch (e) {
    throw serverFailure(place.name, `reading record ${position + 1}`, e);
  }
}
