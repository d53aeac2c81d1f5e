/**
 * The writer's side of a log: one session that every append of a log object goes through, in
 * call order, and what is done when that session is lost in the middle of an append.
 *
 * An append is one statement, `CALL <schema>.append(log, expected, known, batch, count, lines, keys, ...)`,
 * in autocommit: the server takes the log's append lock, writes the batch (with any that wait
 * for the lock) and commits, all inside that one call, so the lock is never held across a round
 * trip to the client (`schema.ts`). The batch id is a
 * fresh uuid made here; the function keeps it with the batch's first record, in the same row.
 * With it goes `known`, the head this log object had reached: every position below it was
 * committed before the call, so the batch, if it landed, is at or past it (the function refuses
 * a log whose head is below it: one that went back), and the look-up after a lost connection
 * reads only the records from there.
 *
 * How a failure is read:
 * - No session could be made: nothing was sent, nothing written.
 * - The server answered with an `ERROR` (a lock or statement timeout, a full disk, a missing
 *   privilege, ...): the transaction rolled back, nothing was written; the log goes on. But an
 *   `ERROR` once the batch waited in the waiting table ({@link WAITED_STATE}) leaves it there,
 *   where another writer's commit may still take it: that is found out as below.
 * - Anything else after the call was sent (the connection reset or ended, the server said
 *   `FATAL`, as when an administrator terminates the session, no answer within the client's
 *   deadline, the session then dropped, as from a server whose processes stopped): the batch may have committed
 *   or not, and the old session may even still be waiting for the log's lock and commit later.
 *   So, on a new session: the old one is **fenced** first (terminated if it is still there, by
 *   pid and start time so that a reused pid is not hit, and waited for until it is gone), then,
 *   under the append lock, the batch is taken out of the waiting table if it is there (no later
 *   commit can write it), and only then is the batch id looked up. Found: the append did land, and resolves as if nothing
 *   had happened. Absent: it did not, and never will; the append is refused and the log goes on.
 *   If that cannot be found out within `resolveMs` (the server stays out of reach), the outcome
 *   stays unknown: the log must stop ({@link UnknownOutcome}) until it is reopened.
 *
 * A batch is never sent twice: an append is refused rather than retried, so the only way a
 * batch could be written twice is a second call with the same id, which is never made.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerIoError } from '../../lib/errors.js';
import type { Position } from '../../lib/log.js';
import {
  type Connector,
  described,
  isStatementError,
  NoAnswer,
  PostgresServerError,
  plainly,
  type Session,
  serverFailure,
  sqlState,
} from './connection.js';
import { appendLockKey, identifier, positionOf, WAITED_STATE } from './schema.js';
import type { PostgresPlace } from './uri.js';

/** What the append function answered: written at `[from, head)`, or a conflict with the head it found. */
export interface Answer {
  readonly ok: boolean;
  readonly from: Position;
  readonly head: Position;
  /** The lines a keyed append went past, from the expected head up to `from`, joined by newlines (none: `null`). */
  readonly passed: string | null;
}

/** An append whose outcome could not be found out: the log must stop. */
export class UnknownOutcome extends Error {
  constructor(readonly failure: LedgerIoError) {
    super(failure.message, { cause: failure });
    this.name = 'UnknownOutcome';
  }
}

interface AnswerRow {
  readonly ok: boolean;
  readonly from: string;
  readonly head: string;
  readonly passed: string | null;
}

/** The session appends go through, and the resolution of a lost one. */
export class Writer {
  private session: Session | null;

  constructor(
    private readonly connector: Connector,
    private readonly place: PostgresPlace,
    first: Session,
  ) {
    this.session = first;
  }

  /**
   * Appends `lines` as one batch, expecting the head `expected` (`null`: any), on a log whose
   * head is at least `known` (else it is refused with the head found, below `known`); with
   * `keys` (one a line), past a head that others moved by records of other keys.
   * @throws {@link LedgerIoError} when nothing was written
   * @throws {@link UnknownOutcome} when whether it was written could not be found out
   */
  async append(
    lines: readonly string[],
    expected: Position | null,
    known: Position,
    keys: readonly string[] | null,
  ): Promise<Answer> {
    const session = await this.current();
    const batch = randomUUID();
    const s = identifier(this.place.schema);
    let row: AnswerRow | undefined;
    try {
      ({
        rows: [row],
      } = await session.query<AnswerRow>(
        `CALL ${s}.append($1, $2, $3, $4, $5, $6, $7, NULL, NULL, NULL, NULL)`,
        // the lines as one text, which node-postgres sends as it is (an array it escapes element
        // by element) and the server splits: a line holds no newline, which the count checks
        [
          this.place.log,
          expected,
          known,
          batch,
          lines.length,
          lines.join('\n'),
          keys === null ? null : keys.map(textKey),
        ],
        { name: 'ledgerstore-append' },
      ));
    } catch (e) {
      // an error once the batch waited for the lock leaves it where another commit may take it
      if (isStatementError(e) && sqlState(e) !== WAITED_STATE) throw serverFailure(this.place.name, 'appending', e);
      return this.resolve(session, { id: batch, known, expected, size: lines.length }, e);
    }
    if (row === undefined)
      throw new PostgresServerError(this.place.name, new Error('appending: the append function answered nothing'));
    return {
      ok: row.ok,
      from: positionOf(this.place.name, row.from),
      head: positionOf(this.place.name, row.head),
      passed: row.passed,
    };
  }

  /** The session to append on: the last one, or a new one when it was lost (nothing is sent on a lost one). */
  private async current(): Promise<Session> {
    if (this.session !== null && !this.session.lost()) return this.session;
    const lost = this.session;
    this.session = null;
    if (lost !== null) void lost.end();
    this.session = await this.connector.session('append');
    return this.session;
  }

  /** Finds out whether `batch`, sent on `old`, landed: see the module's comment. */
  private async resolve(old: Session, batch: Sent, failure: unknown): Promise<Answer> {
    this.session = null;
    void old.end();
    const deadline = Date.now() + this.connector.resolveMs;
    const happened =
      sqlState(failure) === WAITED_STATE
        ? "an append failed after its batch waited for the log's lock"
        : failure instanceof NoAnswer
          ? 'an append got no answer in time, and its session was dropped'
          : 'the connection was lost during an append';
    let trouble: unknown = failure;
    for (let wait = 25; Date.now() < deadline; wait = Math.min(2 * wait, 1000)) {
      let fresh: Session | null = null;
      let found: Answer | null | undefined; // undefined: not found out yet
      try {
        fresh = await this.connector.session('append');
        await fence(fresh, old, deadline);
        found = await lookUp(fresh, this.place, batch);
        this.session = fresh;
      } catch (e) {
        if (fresh !== null) void fresh.end();
        trouble = e;
      }
      if (found === null) {
        throw new PostgresServerError(
          this.place.name,
          described(
            `${happened} (${plainly(failure)}); the batch was not written (its id, looked up once the old session had ended, is not there), and the log goes on`,
            failure,
          ),
        );
      }
      if (found !== undefined) return found;
      await sleep(Math.max(0, Math.min(wait, deadline - Date.now())));
    }
    throw new UnknownOutcome(
      new PostgresServerError(
        this.place.name,
        described(
          `${happened} (${plainly(failure)}), and whether its batch was written could not be found out within ${this.connector.resolveMs} ms (${plainly(trouble)}); every append is refused until the ledger is reopened, which reads what the database holds`,
          failure,
        ),
      ),
    );
  }

  /** Ends the session. */
  async close(): Promise<void> {
    const session = this.session;
    this.session = null;
    await session?.end();
  }
}

/**
 * Ends `old`'s server process if it is still there, and waits until it is gone: only then can
 * it no longer commit what it was sent.
 * @throws when it is still there at `deadline`
 */
async function fence(fresh: Session, old: Session, deadline: number): Promise<void> {
  const there = 'FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz';
  await fresh.query(`SELECT pg_terminate_backend(pid) ${there}`, [old.pid, old.started]);
  for (;;) {
    const {
      rows: [row],
    } = await fresh.query<{ n: string }>(`SELECT count(*) AS n ${there}`, [old.pid, old.started]);
    if (row?.n === '0') return;
    if (Date.now() >= deadline)
      throw new Error(`the old session (pid ${old.pid}) is still there after it was told to end`);
    await sleep(10);
  }
}

/** A batch sent: its id, the head its log had reached when it was sent, the head it expected, and its records' count. */
interface Sent {
  readonly id: string;
  readonly known: Position;
  readonly expected: Position | null;
  readonly size: number;
}

/**
 * The batch's place if it was written, else `null`: the record at or past `known` that holds
 * its id, found by the records' key from there on (no index on the ids, which every commit would
 * have to write). A keyed batch that landed past the head it expected went past records that
 * the writer must take in, as the function would have returned them: they are read too.
 */
async function lookUp(fresh: Session, place: PostgresPlace, batch: Sent): Promise<Answer | null> {
  // Under the log's append lock, a batch left in the waiting table is taken out of it: no later
  // commit can write it then, and one that did has committed.
  await fresh.query('BEGIN');
  await fresh.query(`SELECT pg_advisory_xact_lock(${appendLockKey(place.schema, '$1')})`, [place.log]);
  await fresh.query(`DELETE FROM ${identifier(place.schema)}.waiting WHERE log = $1 AND batch = $2`, [
    place.log,
    batch.id,
  ]);
  await fresh.query('COMMIT');
  const {
    rows: [row],
  } = await fresh.query<{ position: string }>(
    `SELECT position FROM ${identifier(place.schema)}.records WHERE log = $1 AND position >= $2 AND batch = $3`,
    [place.log, batch.known, batch.id],
  );
  if (row === undefined) return null;
  const from = positionOf(place.name, row.position);
  let passed: string | null = null;
  if (batch.expected !== null && from > batch.expected) {
    const { rows } = await fresh.query<{ line: string }>(
      `SELECT line FROM ${identifier(place.schema)}.records WHERE log = $1 AND position >= $2 AND position < $3 ORDER BY position`,
      [place.log, batch.expected, from],
    );
    if (rows.length !== from - batch.expected)
      throw new Error(`the records from ${batch.expected} to ${from} that the batch went past are not all there`);
    passed = rows.map((r) => r.line).join('\n');
  }
  return { ok: true, from, head: from + batch.size, passed };
}

/**
 * A key as PostgreSQL's `text` can hold it: a key is free text (an edit's id may hold U+0000),
 * which `text` refuses, failing the whole batch. The server compares keys by a hash, so two keys
 * made one here only clash where they need not (the batch then goes the conflict's way), never
 * the other way round.
 */
function textKey(key: string): string {
  return key.includes('\u0000') ? JSON.stringify(key) : key;
}
