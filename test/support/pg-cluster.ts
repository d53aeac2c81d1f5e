/**
 * The PostgreSQL server of a test run, shared by every test file of the run: a throwaway cluster
 * that `pg-keeper.ts` starts on first use and removes when the run ends, or the server that
 * `LEDGERSTORE_PG_URL` names (`postgres://user:password@host/db`), where the run keeps to a
 * schema of its own (`lst_<pid>`), dropped at the end.
 *
 * Where the server's binaries are missing (and no `LEDGERSTORE_PG_URL` is given), every test
 * that needs the server fails with the keeper's message, which says how to install them: the
 * tests are never skipped.
 *
 * Each test takes a log of its own ({@link freshLog}), so tests never see each other's records.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type PostgresBackend, type PostgresOptions, postgresBackend } from '../../backends/postgres/index.js';
import { appendLockKey } from '../../backends/postgres/schema.js';
import type { Record } from '../../lib/index.js';
import { honchoCodec } from '../../lib/index.js';
import { until } from '../conformance/common.js';

export { until } from '../conformance/common.js';

const KEEPER = fileURLToPath(new URL('./pg-keeper.js', import.meta.url));

/** Where the run's server is. */
export interface PgServer {
  /** A URI of the server, without `log=` and `schema=`. */
  readonly url: string;
  /** The schema the run's logs live in. */
  readonly schema: string;
}

let starting: Promise<PgServer> | null = null;

/** The run's server, started on first use. */
export function pgServer(): Promise<PgServer> {
  starting ??= start();
  return starting;
}

async function start(): Promise<PgServer> {
  const given = process.env.LEDGERSTORE_PG_URL;
  const schema = `lst_${process.pid}`;
  const args = given === undefined || given === '' ? ['cluster'] : ['schema', given, schema];
  const said = await keeper(args);
  if (given !== undefined && given !== '') return { url: given, schema };
  const { host, port, user, database } = said as { host: string; port: number; user: string; database: string };
  const url = new URL(`postgresql:///${database}`);
  url.searchParams.set('host', host);
  url.searchParams.set('port', String(port));
  url.searchParams.set('user', user);
  return { url: url.href, schema };
}

/** The keeper's process, once started, and the answers to what it was asked, in order. */
let kept: {
  child: ChildProcessByStdio<Writable, Readable, null>;
  answers: ((said: { error?: string }) => void)[];
} | null = null;

/** Starts the keeper and gives what it said on its first line; it lives until this process ends. */
function keeper(args: readonly string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KEEPER, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    const answers: ((said: { error?: string }) => void)[] = [
      (said) => {
        if (said.error !== undefined) reject(new Error(`the tests' PostgreSQL server: ${said.error}`));
        else resolve(said);
      },
    ];
    kept = { child, answers };
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      for (let newline = out.indexOf('\n'); newline !== -1; newline = out.indexOf('\n')) {
        const said = JSON.parse(out.slice(0, newline)) as { error?: string };
        out = out.slice(newline + 1);
        answers.shift()?.(said);
      }
      // the run may end without waiting for it: its stdin closing is what stops it
      child.unref();
      (child.stdin as unknown as Socket).unref();
      (child.stdout as unknown as Socket).unref();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      reject(new Error(`the tests' PostgreSQL server: its keeper exited (${code}) before it said where the server is`)),
    );
  });
}

/**
 * Restarts the run's server (`pg_ctl restart -m fast`), and resolves once it takes connections
 * again: every session is ended, as a server's restart or crash ends them. On a server of the
 * user's (`LEDGERSTORE_PG_URL`), every ledgerstore session is ended instead.
 */
export async function restartServer(): Promise<void> {
  await pgServer();
  const keeperNow = kept;
  if (keeperNow === null) throw new Error('the keeper is not running');
  const stdout = keeperNow.child.stdout as unknown as Socket;
  stdout.ref(); // the run waits for the answer
  try {
    await new Promise<void>((resolve, reject) => {
      keeperNow.answers.push((said) =>
        said.error === undefined ? resolve() : reject(new Error(`the tests' PostgreSQL server: ${said.error}`)),
      );
      keeperNow.child.stdin.write('restart\n');
    });
  } finally {
    stdout.unref();
  }
}

let logs = 0;

/** A log name no other test of the run has. */
export function freshLog(prefix = 't'): string {
  logs++;
  return `${prefix}${logs}`;
}

/** The URI of log `log` in the run's schema, with more query parameters if given. */
export async function logUri(log: string, more: { readonly [key: string]: string } = {}): Promise<string> {
  const { url, schema } = await pgServer();
  const uri = new URL(url);
  uri.searchParams.set('log', log);
  uri.searchParams.set('schema', schema);
  for (const [key, value] of Object.entries(more)) uri.searchParams.set(key, value);
  return uri.href;
}

/** A backend of a fresh log (or of `log`) of Honcho records. */
export async function pgBackend(
  log = freshLog(),
  options: Omit<PostgresOptions<Record>, 'codec'> = {},
): Promise<PostgresBackend<Record>> {
  return postgresBackend(await logUri(log), { codec: honchoCodec, ...options });
}

/** A plain client of the server, as the run's superuser, for what tests look at or break by hand. */
export async function pgAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: (await pgServer()).url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Runs `body` with an admin client, ended afterwards. */
export async function withAdmin<T>(body: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = await pgAdmin();
  try {
    return await body(admin);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Removes log `log` from the run's schema: its records and its row. */
export async function dropLog(log: string): Promise<void> {
  const { schema } = await pgServer();
  await withAdmin(async (admin) => {
    for (const table of ['records', 'logs']) {
      await admin
        .query(`DELETE FROM "${schema}".${table} WHERE ${table === 'logs' ? 'name' : 'log'} = $1`, [log])
        .catch((e: unknown) => {
          if ((e as { code?: unknown }).code !== '42P01') throw e; // no schema yet: nothing to remove
        });
    }
  });
}

/** A PostgreSQL log for the conformance suite. */
export interface PgSubject {
  readonly backend: PostgresBackend<Record>;
  /** A fresh backend object of the same log. */
  readonly fresh: () => PostgresBackend<Record>;
  /** Removes the log. */
  readonly cleanup: () => Promise<void>;
  /** Cuts the log back to its first `head` records behind its writers' backs, as a failover to a standby that had not received the rest does. */
  readonly rewind: (head: number) => Promise<void>;
}

/** A fresh log's backend for the conformance suite (see {@link PgSubject}). */
export async function pgSubject(options: Omit<PostgresOptions<Record>, 'codec'> = {}): Promise<PgSubject> {
  const log = freshLog();
  const uri = await logUri(log);
  const { schema } = await pgServer();
  const fresh = (): PostgresBackend<Record> => postgresBackend(uri, { codec: honchoCodec, ...options });
  const rewind = (head: number): Promise<void> =>
    withAdmin(async (admin) => {
      await admin.query('BEGIN');
      await admin.query(`DELETE FROM "${schema}".records WHERE log = $1 AND position >= $2`, [log, head]);
      await admin.query(`UPDATE "${schema}".logs SET head = $2 WHERE name = $1`, [log, head]);
      await admin.query('COMMIT');
    });
  return { backend: fresh(), fresh, cleanup: () => dropLog(log), rewind };
}

/** A schema name of the run's, other than its own: `<run's schema><tag>` (a tag of up to 3 characters). */
export async function otherSchema(tag: string): Promise<string> {
  return `${(await pgServer()).schema}${tag}`;
}

/**
 * Makes a login role `name` with `password` (dropped first if an earlier test left it), and
 * gives a URI of log `log` as that role.
 */
export async function roleUri(
  name: string,
  password: string,
  log: string,
  grants: (admin: pg.Client, schema: string) => Promise<void> = async () => undefined,
): Promise<string> {
  const { schema } = await pgServer();
  await withAdmin(async (admin) => {
    await admin.query(`DROP OWNED BY ${name}`).catch(() => undefined);
    await admin.query(`DROP ROLE IF EXISTS ${name}`);
    await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
    await grants(admin, schema);
  });
  const uri = new URL(await logUri(log));
  uri.searchParams.set('user', name);
  uri.searchParams.set('password', password);
  return uri.href;
}

/** The pid of the session that waits for a lock while it appends (one at a time in these tests). */
export async function waitingAppender(admin: pg.Client): Promise<number> {
  let pid = 0;
  await until(async () => {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'ledgerstore-append' AND wait_event_type = 'Lock' AND query LIKE '%.append(%'",
    );
    pid = rows[0]?.pid ?? 0;
    return pid !== 0;
  }, 'an append to wait for the log lock');
  return pid;
}

/** Holds log `log`'s row lock from `admin`'s session (in a transaction) until `release` is called. */
export async function holdLogLock(admin: pg.Client, log: string): Promise<{ release: () => Promise<void> }> {
  const { schema } = await pgServer();
  await admin.query('BEGIN');
  await admin.query(`SELECT head FROM "${schema}".logs WHERE name = $1 FOR UPDATE`, [log]);
  return { release: async () => void (await admin.query('ROLLBACK')) };
}

/**
 * Holds log `log`'s append lock (the advisory lock that each commit of appends holds) from
 * `admin`'s session until `release` is called: appends meanwhile wait in the waiting table.
 */
export async function holdAppendLock(admin: pg.Client, log: string): Promise<{ release: () => Promise<void> }> {
  const { schema } = await pgServer();
  const key = appendLockKey(schema, '$1');
  await admin.query(`SELECT pg_advisory_lock(${key})`, [log]);
  return { release: async () => void (await admin.query(`SELECT pg_advisory_unlock(${key})`, [log])) };
}

/** Waits until `count` batches of log `log` wait for its append lock, in the waiting table. */
export async function batchesWaiting(admin: pg.Client, log: string, count: number): Promise<void> {
  const { schema } = await pgServer();
  await until(
    async () =>
      (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".waiting WHERE log = $1`, [log]))
        .rows[0]?.n === count,
    `${count} batches to wait for the append lock`,
  );
}

/** The lines of log `log`, by position, as the database holds them. */
export async function linesOf(log: string): Promise<string[]> {
  const { schema } = await pgServer();
  return withAdmin(async (admin) =>
    (
      await admin.query<{ line: string }>(`SELECT line FROM "${schema}".records WHERE log = $1 ORDER BY position`, [
        log,
      ])
    ).rows.map((r) => r.line),
  );
}
