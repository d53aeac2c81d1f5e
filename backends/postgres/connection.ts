/**
 * Connections to the server, and what their failures mean.
 *
 * - node-postgres is loaded on first use, not when ledgerstore is imported: it costs about 50 ms
 *   at start, which a command on a JSONL ledger should not pay.
 * - Every client gets a connect timeout (node-postgres waits forever by default), TCP keepalive,
 *   and the server-side `lock_timeout` and `statement_timeout`: a statement the server cancels
 *   rolls back, so a timeout there is an answer ("nothing was written").
 * - Every wait on the server has the client's deadline too (`Timeouts.deadlineMs`, a URI's
 *   `timeout=`): a server that stopped answering (its processes stopped, a network gone quiet)
 *   is otherwise waited for as long as TCP keeps the connection, minutes or forever. A statement
 *   is given node-postgres's `query_timeout`; past it, the statement may still run and commit,
 *   so its failure ({@link NoAnswer}) is not an answer: the session is dropped at once (its
 *   socket destroyed, as node-postgres leaves the statement in flight and would queue the next
 *   behind it), and an append's outcome is looked up as after a lost connection (`append.ts`).
 *   A session's end is bounded the same way.
 * - A session opened for a read-only log runs every transaction read-only
 *   (`default_transaction_read_only`), so that nothing it sends can write.
 * - Every client and pool has an `error` listener, a pooled client for its whole life (while it
 *   is taken out of the pool too, where node-postgres's own listener is off): a session that the
 *   server ends emits one, and an unheard `error` event would end the process. The call that
 *   was using the session fails instead.
 *
 * A failure is either the server's answer to a statement (an `ERROR`: the statement, and in
 * autocommit its transaction, rolled back) or not (a lost connection, a `FATAL` such as an
 * administrator's termination, no answer in time): then whether a statement that was sent took
 * effect is not known, and only a look at the database after fencing the old session can tell
 * (`append.ts`).
 *
 * @module
 */
import type * as pg from 'pg';
import { LedgerIoError } from '../../lib/errors.js';
import { type Timeouts, timeoutsOf } from './timeouts.js';
import type { PostgresPlace } from './uri.js';

/** node-postgres's module. */
export type Pg = typeof import('pg').default;

let loading: Promise<Pg> | null = null;

/** node-postgres, loaded once. */
export function loadPg(): Promise<Pg> {
  loading ??= import('pg').then((module) => module.default);
  return loading;
}

/** How a statement is run: prepared once per session under `name`; rows as arrays (`rowMode`). */
export interface StatementOptions {
  readonly name?: string;
  readonly rowMode?: 'array';
}

/** What a client and a pool both do: run one statement. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
    options?: StatementOptions,
  ): Promise<pg.QueryResult<R>>;
}

/** node-postgres's form of a statement, given up after `deadlineMs` (`query_timeout`). */
const statement = (
  text: string,
  values: unknown[] | undefined,
  options: StatementOptions | undefined,
  deadlineMs: number,
): pg.QueryConfig => {
  const config: pg.QueryConfig & { query_timeout: number } = {
    text,
    values: values ?? [],
    ...options,
    query_timeout: deadlineMs,
  };
  return config;
};

/**
 * No answer from the server within the client's deadline: the session was dropped, and what it
 * was sent may still take effect.
 */
export class NoAnswer extends Error {
  constructor(
    readonly ms: number,
    cause?: unknown,
  ) {
    super(`no answer from the server within ${ms} ms`, { cause });
    this.name = 'NoAnswer';
  }
}

/** node-postgres's words when a statement's `query_timeout` passed. */
const QUERY_TIMEOUT = 'Query read timeout';

/** `running`, with node-postgres's `query_timeout` failure as a {@link NoAnswer}. */
async function answered<T>(running: Promise<T>, deadlineMs: number): Promise<T> {
  try {
    return await running;
  } catch (e) {
    throw e instanceof Error && e.message === QUERY_TIMEOUT ? new NoAnswer(deadlineMs, e) : e;
  }
}

/** What a session is for: its `application_name`, so that an operator sees it in `pg_stat_activity`. */
export type SessionRole = 'append' | 'read' | 'listen' | 'lease';

/**
 * A connected client and which server process serves it. Its `query` keeps the process alive
 * only while a statement is in flight, as a file does not keep it alive either: an open log
 * does not hold a program that is done (a listening session does, while it listens).
 */
export interface Session extends Queryable {
  readonly client: pg.Client;
  /** The server process's pid (`pg_backend_pid()`). */
  readonly pid: number;
  /** When that process started, as the server writes it: with the pid, it names the session even if the pid is reused. */
  readonly started: string;
  /** Set once the connection failed or ended: nothing more is sent on it. */
  readonly lost: () => boolean;
  /** Ends the session, whatever state it is in (it was lost already, say). */
  end(): Promise<void>;
}

/** The sessions a log reads with: a pool, which replaces those it loses. */
export interface ReadPool extends Queryable {
  /** Makes (or takes) a session and gives it back: the first contact with the server. */
  reach(): Promise<void>;
  /**
   * A session of the pool's, to give back with `release` (`release(true)`: ended, not reused).
   * It has an `error` listener already: its failures reach the call using it, not the process.
   */
  connect(): Promise<pg.PoolClient>;
  /** The client's deadline, for what is run on a session of {@link connect}'s. */
  readonly deadlineMs: number;
  end(): Promise<void>;
}

/** Makes the sessions of one log. */
export class Connector {
  private readonly timeouts: Required<Timeouts>;

  constructor(
    private readonly place: PostgresPlace,
    readonly readOnly: boolean,
    timeouts: Timeouts,
  ) {
    this.timeouts = timeoutsOf(timeouts, place.deadlineMs);
  }

  /** The client's deadline: the longest any one wait on the server lasts. */
  get deadlineMs(): number {
    return this.timeouts.deadlineMs;
  }

  get resolveMs(): number {
    return this.timeouts.resolveMs;
  }

  get heartbeatMs(): number {
    return this.timeouts.heartbeatMs;
  }

  /** The client settings for a session of `role`. */
  private config(role: SessionRole): pg.ClientConfig {
    const { connectMs, lockMs, statementMs } = this.timeouts;
    return {
      ...(this.readOnly ? withStartupOption(this.place.connection, READ_ONLY) : this.place.connection),
      application_name: `ledgerstore-${role}`,
      connectionTimeoutMillis: connectMs,
      keepAlive: true,
      lock_timeout: lockMs,
      statement_timeout: statementMs,
    };
  }

  /**
   * A new session for `role`, connected.
   * @throws {@link LedgerIoError} saying why the server could not be reached or refused
   */
  async session(role: SessionRole): Promise<Session> {
    const pg = await loadPg();
    let client: pg.Client;
    try {
      client = new pg.Client(this.config(role));
    } catch (e) {
      throw connectFailure(this.place.name, e); // node-postgres refused its settings
    }
    let lost = false;
    client.on('error', () => {
      lost = true;
    });
    client.on('end', () => {
      lost = true;
    });
    const { deadlineMs } = this.timeouts;
    try {
      await client.connect();
    } catch (e) {
      await endWithin(client, deadlineMs);
      throw connectFailure(this.place.name, connectTimedOut(e, this.timeouts.connectMs));
    }
    // node-postgres has ref() and unref() on a client (its socket's); @types/pg leaves them out
    const handle = client as unknown as { ref(): void; unref(): void };
    const drop = (): void => {
      lost = true;
      handle.ref(); // else the process may leave before the server has seen the session end
      void endWithin(client, deadlineMs);
    };
    /** A statement on the session; one given up at the deadline drops it (see the module's comment). */
    const run = async <R extends pg.QueryResultRow>(
      text: string,
      values?: unknown[],
      options?: StatementOptions,
    ): Promise<pg.QueryResult<R>> => {
      try {
        return await answered(client.query<R>(statement(text, values, options, deadlineMs)), deadlineMs);
      } catch (e) {
        if (e instanceof NoAnswer) drop();
        throw e;
      }
    };
    let row: { pid: number; started: string } | undefined;
    try {
      ({
        rows: [row],
      } = await run<{ pid: number; started: string }>(
        'SELECT pg_backend_pid() AS pid, backend_start::text AS started FROM pg_stat_activity WHERE pid = pg_backend_pid()',
      ));
      if (row === undefined) throw new Error('the server does not list this session in pg_stat_activity');
    } catch (e) {
      await endWithin(client, deadlineMs);
      // connected: what failed is the session's first statement (a statement_timeout, say), not the connect
      throw serverFailure(this.place.name, 'starting a session', e);
    }
    const holds = role === 'listen';
    if (!holds) handle.unref();
    let inFlight = 0;
    const query: Queryable['query'] = async (text, values, options) => {
      if (inFlight++ === 0 && !holds) handle.ref();
      try {
        return await run(text, values, options);
      } finally {
        if (--inFlight === 0 && !holds) handle.unref();
      }
    };
    const end = async (): Promise<void> => {
      handle.ref(); // else the process may leave before the server has seen the session end
      await endWithin(client, deadlineMs);
    };
    return { client, pid: row.pid, started: row.started, lost: () => lost, query, end };
  }

  /**
   * A pool of up to `max` sessions for reads. Its idle sessions do not keep the process alive
   * (`allowExitOnIdle`); they do while the pool is ended, until the server has seen them end.
   */
  async pool(max: number): Promise<ReadPool> {
    const pg = await loadPg();
    const { deadlineMs } = this.timeouts;
    const pool = new pg.Pool({ ...this.config('read'), max, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
    pool.on('error', () => undefined); // an idle session lost: the pool drops it and makes another when needed
    const clients = new Set<pg.PoolClient>();
    pool.on('connect', (client) => {
      clients.add(client);
      // node-postgres listens for a client's errors only while it is idle in the pool: one taken
      // out and ended by the server (an administrator's termination, a restart) would otherwise
      // end the process. Its statement or COPY fails, and it is not reused (its release drops it).
      client.on('error', () => undefined);
    });
    pool.on('remove', (client) => clients.delete(client as pg.PoolClient));
    const connect = (): Promise<pg.PoolClient> =>
      pool.connect().catch((e: unknown) => Promise.reject(connectTimedOut(e, this.timeouts.connectMs)));
    return {
      // a pooled client whose statement was given up is dropped by the pool (released with the error)
      query: (text, values, options) => answered(pool.query(statement(text, values, options, deadlineMs)), deadlineMs),
      reach: async () => (await connect()).release(),
      connect,
      deadlineMs,
      end: async () => {
        for (const client of clients) (client as unknown as { ref(): void }).ref();
        const ended = endQuietly(pool);
        // a server that stopped answering never ends its side: the sockets are destroyed then
        if (!(await within(ended, deadlineMs))) for (const client of clients) destroy(client);
      },
    };
  }
}

/** The server setting that makes every transaction of a session read-only. */
const READ_ONLY = '-c default_transaction_read_only=on';

/**
 * `connection` with `option` added to the server options sent at connect (`options`), after
 * those it has already: the URI's `options=`, else `PGOPTIONS`. (Given as a setting, it would
 * be overridden by the URI's; sent at connect, it holds before the first statement.)
 */
function withStartupOption(connection: PostgresPlace['connection'], option: string): PostgresPlace['connection'] {
  if ('connectionString' in connection) {
    const url = new URL(connection.connectionString);
    const before = url.searchParams.get('options') ?? process.env.PGOPTIONS ?? '';
    url.searchParams.set('options', `${before} ${option}`.trim());
    return { connectionString: url.href };
  }
  return { ...connection, options: `${process.env.PGOPTIONS ?? ''} ${option}`.trim() };
}

/** The SQLSTATE of a server's error (`28P01`, `42501`, ...), or `undefined`. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Whether `error` is the server's answer to a statement that it then rolled back: an `ERROR`
 * with its SQLSTATE. Anything else (a lost connection, a `FATAL` or `PANIC` that ends the
 * session) leaves the statement's outcome unknown.
 */
export function isStatementError(error: unknown): boolean {
  return sqlState(error) !== undefined && (error as { severity?: unknown }).severity === 'ERROR';
}

/** What to tell an operator about a server's SQLSTATE, by its class or code. */
const ADVICE: { readonly [state: string]: string } = {
  '28P01': 'check the user, and the password in PGPASSWORD, ~/.pgpass or the URI',
  '28000': "the server's pg_hba.conf does not let this user in from here",
  '3D000': 'create the database, or name one that exists',
  '53300': 'the server has no connection left; raise max_connections or close other clients',
  '57P03': 'the server is starting or stopping; try again when it is up',
  '42501': 'the role lacks a privilege it needs (see docs/postgres.md, "Roles")',
  '25006':
    'the server accepts only reads (a standby, or default_transaction_read_only); open the ledger read-only or connect to the primary',
  '55P03': 'another session held the log longer than lock_timeout; nothing was written, try again',
  '57014':
    'the statement ran longer than statement_timeout (timeouts.statementMs) or was cancelled, and rolled back; try again, or raise it',
};

/** What the system or node-postgres said, as an operator should read it. */
export function plainly(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof NoAnswer)
    return `${error.message} (the client's deadline: the URI's timeout=, or timeouts.deadlineMs); the server may be stopped, overloaded or cut off: check that it runs and answers (pg_isready)`;
  const { code } = error as { code?: unknown };
  const state = sqlState(error);
  if (state !== undefined)
    return `${error.message} (SQLSTATE ${state})${ADVICE[state] === undefined ? '' : `; ${ADVICE[state]}`}`;
  // node-postgres's words when the server asks for a password (SCRAM) and none was given
  if (/client password must be a string/.test(error.message))
    return 'the server asks for a password and none was given; put it in PGPASSWORD or ~/.pgpass (or in the URI, postgres://user:password@host/db, where ps shows it)';
  if (code === 'ECONNREFUSED' || code === 'ENOENT')
    return `no server answers there (${String(code)}); check that PostgreSQL runs and that the URI's host and port name it`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `the host name does not resolve (${String(code)}); check the URI's host`;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `${error.message} (${code})`;
  if (/timeout/i.test(error.message))
    return `${error.message}: no answer from the server in time; check that it runs and is reachable`;
  return error.message;
}

/** An error whose message is already what an operator should read (LedgerIoError prints it as it is). */
export function described(text: string, cause: unknown): Error {
  return new Error(text, { cause });
}

/**
 * The PostgreSQL server refused, failed or could not be reached (`LEDGER_IO`, as a disk's
 * failure is): its runbook entry is the server's, not a file system's.
 */
export class PostgresServerError extends LedgerIoError {
  override readonly runbook = 'postgres-server';
}

/** A failure to connect: nothing was sent. */
export function connectFailure(name: string, error: unknown): LedgerIoError {
  if (error instanceof LedgerIoError) return error;
  return new PostgresServerError(name, described(`cannot connect to PostgreSQL: ${plainly(error)}`, error));
}

/** A failure of what the log was `doing` (`reading record 5`, `appending`). */
export function serverFailure(name: string, doing: string, error: unknown): LedgerIoError {
  if (error instanceof LedgerIoError) return error;
  return new PostgresServerError(name, described(`${doing} failed: ${plainly(error)}`, error));
}

/** Ends a client or pool, whatever state it is in. */
async function endQuietly(client: pg.Client | pg.Pool | null): Promise<void> {
  try {
    await client?.end();
  } catch {
    // it was lost already: there is nothing to end
  }
}

/** node-postgres's failure to connect within `connectionTimeoutMillis` (a client's, a pool's) as a {@link NoAnswer}. */
function connectTimedOut(error: unknown, ms: number): unknown {
  const words = error instanceof Error ? error.message : '';
  return /^timeout expired$|connection timeout|timeout exceeded when trying to connect/.test(words)
    ? new NoAnswer(ms, error)
    : error;
}

/** Whether `running` settled within `ms`. */
async function within(running: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([running.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Ends `client`, within `deadlineMs`: node-postgres's end says goodbye and waits for the server
 * to close its side, which a stopped server never does; then its socket is destroyed.
 */
export async function endWithin(client: pg.Client, deadlineMs: number): Promise<void> {
  if (!(await within(endQuietly(client), deadlineMs))) destroy(client);
}

/** Destroys `client`'s socket: node-postgres has no public call for it, `end` is the only way and may wait. */
function destroy(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
