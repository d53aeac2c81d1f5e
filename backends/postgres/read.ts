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
import { asDamage, DamagedError } from '../../lib/errors.js';
import type { Position, RecordCodec } from '../../lib/log.js';
import { type Queryable, serverFailure } from './connection.js';
import { identifier } from './schema.js';
import type { PostgresPlace } from './uri.js';

/** Records per page: large enough that a round trip is a small part of a page's cost. */
export const PAGE = 10_000;

/**
 * The records at positions `[from, end)`, a page at a time, in order. A page comes as one
 * value: its lines joined by newlines on the server (`string_agg`, in position order), with
 * their count. One value per page rather than a row per record is most of what makes a replay
 * fast: node-postgres's cost is per row, and the page is then read as a JSONL file's chunk is,
 * each line decoded where it lies. A page with fewer rows than positions has a hole, and the
 * first missing position is looked up to say which.
 * @throws {@link DamagedError} at a missing position or a line that is not a record
 * @throws `LedgerIoError` when the server fails
 */
export async function* readPages<R>(
  db: Queryable,
  place: PostgresPlace,
  codec: RecordCodec<R>,
  from: Position,
  end: Position,
): AsyncGenerator<R[]> {
  const table = `${identifier(place.schema)}.records`;
  const text = `SELECT count(*)::int AS n, string_agg(line, E'\\n' ORDER BY position) AS lines FROM ${table} WHERE log = $1 AND position >= $2 AND position < $3`;
  const page = (start: Position): Promise<Page> => {
    const last = Math.min(start + PAGE, end);
    return db.query<Page>(text, [place.log, start, last], { name: `ledgerstore-page-${place.schema}` }).then(
      ({ rows: [row] }) => row ?? { n: 0, lines: null },
      (e: unknown) => Promise.reject(serverFailure(place.name, `reading records ${start + 1} to ${last}`, e)),
    );
  };
  let next = from < end ? page(from) : null;
  for (let start = from; next !== null; start += PAGE) {
    const { n, lines } = await next;
    const last = Math.min(start + PAGE, end);
    if (n !== last - start) throw missingRecord(place, await firstMissing(db, place, start, last), end);
    next = last < end ? page(last) : null;
    next?.catch(() => undefined); // awaited on the next turn; a reader that stops here must not leave it unheard
    yield decodeJoined(place, codec, start, n, lines ?? '');
  }
}

/**
 * The `n` records of `lines` (joined by newlines, as `string_agg` gives them), the first at
 * `from`: read as a JSONL chunk is, each line decoded where it lies.
 * @throws {@link DamagedError} at a line that is not a record
 */
export function decodeJoined<R>(
  place: PostgresPlace,
  codec: RecordCodec<R>,
  from: Position,
  n: number,
  lines: string,
): R[] {
  const { records, failed, error } = decodeUpTo(codec, n, lines);
  if (failed !== -1) throw asDamage(place.name, from + failed + 1, error);
  return records;
}

/**
 * The records a keyed append went past (`n` lines joined by newlines, the first at `from`), up
 * to the first that does not decode, and that line's damage (`null` when every one decodes).
 * The append that went past them is committed whatever they hold: they are read as far as
 * they can be, never thrown, so that the append is still reported as appended.
 */
export function decodePassed<R>(
  place: PostgresPlace,
  codec: RecordCodec<R>,
  from: Position,
  n: number,
  lines: string,
): { readonly records: R[]; readonly damage: DamagedError | null } {
  const { records, failed, error } = decodeUpTo(codec, n, lines);
  if (failed === -1) return { records, damage: null };
  const damage = asDamage(place.name, from + failed + 1, error);
  // a codec's own failure (not a refusal) is damage here too: the line is stored, unreadable
  const why = error instanceof Error ? error.message : String(error);
  return {
    records,
    damage:
      damage instanceof DamagedError
        ? damage
        : new DamagedError(place.name, from + failed + 1, `the line does not decode: ${why}`, { cause: error }),
  };
}

/**
 * The records of `n` lines joined by newlines, each decoded where it lies, up to the first that
 * does not decode: its index (`failed`, -1 when every one decodes) and what the codec threw.
 */
function decodeUpTo<R>(
  codec: RecordCodec<R>,
  n: number,
  lines: string,
): { readonly records: R[]; readonly failed: number; readonly error: unknown } {
  const bytes = Buffer.from(lines, 'utf8');
  const records: R[] = [];
  for (let k = 0, at = 0; k < n; k++) {
    const newline = bytes.indexOf(0x0a, at);
    const stop = newline === -1 ? bytes.length : newline;
    try {
      records.push(codec.decode(bytes, at, stop));
    } catch (e) {
      return { records, failed: k, error: e };
    }
    at = stop + 1;
  }
  return { records, failed: -1, error: undefined };
}

/** Damage: no record at `position`, below the log's head `end`. */
export function missingRecord(place: PostgresPlace, position: Position, end: Position): DamagedError {
  return new DamagedError(place.name, position + 1, `record ${position + 1} is missing: the log's head is ${end}`);
}

/** A page: how many rows, and their lines joined by newlines (`null` when none). */
interface Page {
  readonly n: number;
  readonly lines: string | null;
}

/** The first position in `[from, to)` that has no row. */
async function firstMissing(db: Queryable, place: PostgresPlace, from: Position, to: Position): Promise<Position> {
  const { rows } = await db.query<[string]>(
    `SELECT position FROM ${identifier(place.schema)}.records WHERE log = $1 AND position >= $2 AND position < $3 ORDER BY position`,
    [place.log, from, to],
    { rowMode: 'array' },
  );
  let position = from;
  for (const [at] of rows) {
    if (Number(at) !== position) break;
    position++;
  }
  return position;
}

/** The stored line at `position`, or `undefined` when there is none. */
export async function lineAt(db: Queryable, place: PostgresPlace, position: Position): Promise<string | undefined> {
  try {
    const {
      rows: [row],
    } = await db.query<{ line: string }>(
      `SELECT line FROM ${identifier(place.schema)}.records WHERE log = $1 AND position = $2`,
      [place.log, position],
    );
    return row?.line;
  } catch (e) {
    throw serverFailure(place.name, `reading record ${position + 1}`, e);
  }
}
