/**
 * How long the PostgreSQL backend waits for the server, and the defaults.
 *
 * @module
 */

/** How long to wait, in milliseconds. */
export interface Timeouts {
  /**
   * The client's deadline: the longest any one wait on the server lasts (a connect, a statement,
   * a session's end), whatever the server does, even when it stopped answering. Past it the call
   * fails with `LEDGER_IO` and its session is dropped, never reused. A URI's `timeout=` takes
   * its place. Default 30,000.
   */
  readonly deadlineMs?: number;
  /** For a connection to be made (at most {@link deadlineMs}). Default 10,000. */
  readonly connectMs?: number;
  /** The server's `lock_timeout`: for an append to get the log's head row. Default 10,000. */
  readonly lockMs?: number;
  /**
   * The server's `statement_timeout`. Default: two thirds of {@link deadlineMs} (20,000), at
   * most 60,000, so that the server cancels a slow statement (an answer: it rolled back) before
   * the client stops waiting (no answer: an append's outcome must then be looked up).
   */
  readonly statementMs?: number;
  /**
   * For the outcome of an append whose connection was lost, or that got no answer within the
   * deadline, to be found out (a new connection, the old session ended, its batch looked up)
   * before the log stops. Default 30,000.
   */
  readonly resolveMs?: number;
  /** Between two looks at the head by a watcher, besides the notifications. Default 10,000. */
  readonly heartbeatMs?: number;
}

/** The client's deadline where neither the URI nor {@link Timeouts} gives one. */
export const DEFAULT_DEADLINE_MS = 30_000;

/** The waits used where {@link Timeouts} leaves one out (the statement's follows the deadline). */
export const DEFAULT_TIMEOUTS: Required<Omit<Timeouts, 'statementMs'>> = {
  deadlineMs: DEFAULT_DEADLINE_MS,
  connectMs: 10_000,
  lockMs: 10_000,
  resolveMs: 30_000,
  heartbeatMs: 10_000,
};

/** Every wait, from those given, the URI's deadline (which wins over theirs) and the defaults. */
export function timeoutsOf(given: Timeouts, uriDeadlineMs: number | undefined): Required<Timeouts> {
  const deadlineMs = uriDeadlineMs ?? given.deadlineMs ?? DEFAULT_DEADLINE_MS;
  return {
    ...DEFAULT_TIMEOUTS,
    ...given,
    deadlineMs,
    connectMs: Math.min(given.connectMs ?? DEFAULT_TIMEOUTS.connectMs, deadlineMs),
    statementMs: given.statementMs ?? Math.max(1, Math.min(60_000, Math.floor((deadlineMs * 2) / 3))),
  };
}
