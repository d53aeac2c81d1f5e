/**
 * How long the PostgreSQL backend waits for the server, and the defaults.
 *
 * @module
 */

/** How long to wait, in milliseconds. */
export interface Timeouts {
  /** For a connection to be made. Default 10,000. */
  readonly connectMs?: number;
  /** The server's `lock_timeout`: for an append to get the log's head row. Default 10,000. */
  readonly lockMs?: number;
  /** The server's `statement_timeout`. Default 60,000. */
  readonly statementMs?: number;
  /**
   * For the outcome of an append whose connection was lost to be found out (a new connection,
   * the old session ended, its batch looked up) before the log stops. Default 30,000.
   */
  readonly resolveMs?: number;
  /** Between two looks at the head by a watcher, besides the notifications. Default 10,000. */
  readonly heartbeatMs?: number;
}

/** The waits used where {@link Timeouts} leaves one out. */
export const DEFAULT_TIMEOUTS: Required<Timeouts> = {
  connectMs: 10_000,
  lockMs: 10_000,
  statementMs: 60_000,
  resolveMs: 30_000,
  heartbeatMs: 10_000,
};
