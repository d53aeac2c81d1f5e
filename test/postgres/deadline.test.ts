/**
 * A server that stops is an error, in time: every wait on the server has the client's deadline
 * (`timeout=` in the URI, `timeouts.deadlineMs`), a session that the server ends fails the call
 * that used it and never the process, and a statement timeout during an open is told as one.
 *
 * "Stopped" is every process of the run's cluster sent SIGSTOP (the postmaster first, so that it
 * forks no more, then each of its children: a stopped postmaster alone leaves the backends of
 * open sessions answering), and SIGCONT again in a `finally`, so that the cluster lives on for
 * the other tests.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COPY_SPAN } from '../../backends/postgres/copy-out.js';
import { postgresBackend } from '../../backends/postgres/index.js';
import { placeOf } from '../../backends/postgres/uri.js';
import { encodeRecord, honchoCodec, isLedgerError, type Record } from '../../lib/index.js';
import { all, decided, rejects, turn } from '../support/ledger.js';
import { freshLog, linesOf, logUri, pgServer, until, withAdmin } from '../support/pg-cluster.js';

const record = (n: number): Record => decided(turn('deadline', n));

test("timeout= is the URI's deadline: in ms or s, left out of the log's name and of what node-postgres is given; a bad one is refused", () => {
  for (const [given, ms] of [
    ['2500', 2500],
    ['2500ms', 2500],
    ['2s', 2000],
    ['0.5s', 500],
  ] as const) {
    const place = placeOf(`postgres://u:hunter2@db/x?timeout=${given}&log=a`);
    assert.is(place.deadlineMs, ms, given);
    assert.is(place.name, 'postgres://u@db/x?log=a');
    assert.equal(place.connection, { connectionString: 'postgres://u:hunter2@db/x' });
  }
  assert.is(placeOf('postgres://u@db/x').deadlineMs, undefined);
  for (const [given, why] of [
    ['timeout=0', /timeout=0 is not a deadline: give milliseconds/],
    ['timeout=', /timeout= is not a deadline/],
    ['timeout=5m', /timeout=5m is not a deadline/],
    ['timeout=1&timeout=2', /timeout= is given 2 times/],
  ] as const) {
    try {
      placeOf(`postgres://u:hunter2@db/x?${given}`);
      assert.unreachable(`${given} was taken`);
    } catch (e) {
      assert.ok(isLedgerError(e, 'LEDGER_BAD_TARGET'), String(e));
      assert.match((e as Error).message, why);
      assert.not.match((e as Error).message, /hunter2/);
    }
  }
});

/** The pids of the run's cluster: its postmaster and every process it forked. */
async function clusterProcesses(): Promise<{ postmaster: number; children: () => number[] }> {
  const given = process.env.LEDGERSTORE_PG_URL;
  if (given !== undefined && given !== '')
    throw new Error(
      "this test stops the server's processes, which only the run's throwaway cluster lets it do: run it without LEDGERSTORE_PG_URL",
    );
  const host = new URL((await pgServer()).url).searchParams.get('host') as string;
  const postmaster = Number(readFileSync(join(host, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = (): number[] => {
    try {
      return execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
    } catch {
      return []; // pgrep says nothing (and exits 1) when there is none
    }
  };
  return { postmaster, children };
}

/** Whether process `pid` is stopped (state `T`), or exited (a zombie, `Z`), as /proc says. */
function stopped(pid: number): boolean {
  try {
    return /^[TtZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, ''));
  } catch {
    return true; // gone: it answers nothing either
  }
}

/** Sends `name` to process `pid`, if it is still there. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // it exited meanwhile
  }
}

/** Runs `body` with every process of the cluster stopped, and lets them go on afterwards, whatever happens. */
async function withServerStopped<T>(body: () => Promise<T>): Promise<T> {
  const { postmaster, children } = await clusterProcesses();
  const signalled = new Set<number>();
  try {
    signal(postmaster, 'SIGSTOP');
    signalled.add(postmaster);
    // a child forked just before the postmaster stopped shows up on a second look
    for (let fresh = children(); fresh.length > 0; fresh = children().filter((pid) => !signalled.has(pid)))
      for (const pid of fresh) {
        signal(pid, 'SIGSTOP');
        signalled.add(pid);
      }
    await until(() => [...signalled].every(stopped), 'every process of the server to stop');
    return await body();
  } finally {
    for (const pid of signalled) signal(pid, 'SIGCONT');
  }
}

/** Waits until no session of application `name` is left on the server. */
async function sessionsGone(name: string): Promise<void> {
  await withAdmin((admin) =>
    until(
      async () =>
        (
          await admin.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [name],
          )
        ).rows[0]?.n === 0,
      `the sessions of ${name} to end`,
    ),
  );
}

test('every process of the server stopped: an append is refused with LEDGER_IO at the deadline, never believed, and the ledger holds the truth once the server goes on', async () => {
  const log = freshLog('deadline');
  // its own application_name (the URI's wins over the backend's), to find its sessions by
  const application = `ledgerstore-test-${log}`;
  const uri = await logUri(log, { timeout: '1500ms', application_name: application });
  const target = postgresBackend(uri, { codec: honchoCodec, timeouts: { resolveMs: 1000 } });
  const writer = await target.open();
  await writer.append([record(0)]);
  const reader = await target.open({ readOnly: true });
  let refusal: Error | null = null;
  await withServerStopped(async () => {
    refusal = await rejects(writer.append([record(1)]), 'LEDGER_IO', /an append got no answer in time/);
    await rejects(writer.append([record(1)]), 'LEDGER_STOPPED', /an earlier write failed/);
    await rejects(reader.refresh(), 'LEDGER_IO', /reading the head failed: no answer from the server within 1500 ms/);
    // a close does not wait for a server that does not answer either
    await writer.close();
    await reader.close();
  });
  assert.is((refusal as { runbook?: unknown } | null)?.runbook, 'postgres-server', "the server's runbook entry");
  const said = (refusal as Error | null)?.message ?? '';
  assert.match(said, /could not be found out within 1000 ms|the batch was not written/);
  await sessionsGone(application); // the old sessions, let go on, have done what they were sent
  const lines = await linesOf(log);
  if (/the batch was not written/.test(said))
    assert.equal(lines, [encodeRecord(record(0))], 'refused as not written: absent');
  else assert.ok(lines.length === 1 || lines.length === 2, `one record or two: ${lines.length}`);
  const again = await target.open();
  assert.is(again.head, lines.length, 'the reopen reads what the database holds');
  assert.equal((await all(again)).map(encodeRecord), lines);
  assert.equal(await again.append([record(2)]), { from: lines.length, head: lines.length + 1 });
  await again.close();
});

/** The pids of the sessions of application `name`. */
async function sessionsOf(name: string): Promise<number[]> {
  return withAdmin(async (admin) =>
    (
      await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name])
    ).rows.map((r) => r.pid),
  );
}

/** Runs `body` with the server processes `pids` stopped, and lets them go on afterwards, whatever happens. */
async function withStopped<T>(pids: readonly number[], body: () => Promise<T>): Promise<T> {
  for (const pid of pids) signal(pid, 'SIGSTOP');
  try {
    await until(() => pids.every(stopped), 'the sessions to stop');
    return await body();
  } finally {
    for (const pid of pids) signal(pid, 'SIGCONT');
  }
}

test("one session's server process stopped: a read's pooled session that timed out is dropped, not reused; an append's outcome is looked up, and the record is there iff the look-up says so", async () => {
  const log = freshLog('deadline');
  const writing = `ledgerstore-test-${log}-w`;
  const reading = `ledgerstore-test-${log}-r`;
  const options = { codec: honchoCodec, timeouts: { resolveMs: 20_000 } };
  const writer = await postgresBackend(await logUri(log, { timeout: '1s', application_name: writing }), options).open();
  await writer.append([record(0)]);
  const reader = await postgresBackend(await logUri(log, { timeout: '1s', application_name: reading }), options).open({
    readOnly: true,
  });
  const readers = await sessionsOf(reading);
  await withStopped(readers, () =>
    rejects(reader.refresh(), 'LEDGER_IO', /reading the head failed: no answer from the server within 1000 ms/),
  );
  await sessionsGone(reading); // its socket was destroyed: the server's side ended once it went on
  assert.is(await reader.refresh(), 1, 'the next read, on a new session');
  const [old, ...others] = await sessionsOf(writing);
  assert.ok(old !== undefined && others.length === 0, 'one appending session');
  signal(old, 'SIGSTOP');
  let appended: Error | { from: number; head: number };
  try {
    await until(() => stopped(old), 'the appending session to stop');
    const appending = writer.append([record(1)]).catch((e: Error) => e);
    // the look-up's new session is there once the append was given up: the old one may go on
    await until(async () => (await sessionsOf(writing)).length === 2, 'the look-up to start');
    signal(old, 'SIGCONT');
    appended = await appending;
  } finally {
    signal(old, 'SIGCONT');
  }
  await until(async () => !(await sessionsOf(writing)).includes(old), 'the old appending session to end');
  const lines = await linesOf(log);
  if (appended instanceof Error) {
    assert.ok(isLedgerError(appended, 'LEDGER_IO'), String(appended));
    assert.match(
      appended.message,
      /an append got no answer in time, and its session was dropped \(no answer from the server within 1000 ms/,
    );
    assert.match(appended.message, /the batch was not written/);
    assert.equal(lines, [encodeRecord(record(0))], 'refused as not written: absent');
  } else {
    assert.equal(appended, { from: 1, head: 2 });
    assert.equal(lines, [record(0), record(1)].map(encodeRecord), 'resolved as written: there');
  }
  assert.equal(await writer.append([record(2)]), { from: lines.length, head: lines.length + 1 }, 'the log goes on');
  await writer.close();
  await reader.close();
});

test('a connect to a stopped server fails with LEDGER_IO at the deadline', async () => {
  const uri = await logUri(freshLog('deadline'), { timeout: '1s' });
  await withServerStopped(() =>
    rejects(
      postgresBackend(uri, { codec: honchoCodec }).open(),
      'LEDGER_IO',
      /cannot connect to PostgreSQL: no answer from the server within 1000 ms/,
    ),
  );
});

/** Records in the log: more than two spans, so that a span's COPY is in flight while another is read. */
const COUNT = 2 * COPY_SPAN + 1000;

test("a read session ended by the server during the open's read-through: the open fails with LEDGER_IO, and the process lives", async () => {
  const log = freshLog('deadline');
  const uri = await logUri(log);
  await (await postgresBackend(uri, { codec: honchoCodec }).open()).close();
  const { schema } = await pgServer();
  const [before, after] = encodeRecord(record(0)).split('"turn":0') as [string, string];
  await withAdmin(async (admin) => {
    await admin.query(
      `INSERT INTO "${schema}".records (log, position, line) SELECT $1, n, $2 || n || $3 FROM generate_series(0, $4 - 1) AS n`,
      [log, `${before}"turn":`, after, COUNT],
    );
    await admin.query(`UPDATE "${schema}".logs SET head = $2 WHERE name = $1`, [log, COUNT]);
  });
  const uncaught: unknown[] = [];
  const hear = (e: unknown): void => void uncaught.push(e);
  process.on('uncaughtException', hear);
  let replayed = 0;
  try {
    const opening = postgresBackend(uri, { codec: honchoCodec }).open({
      readOnly: true,
      replay: async (_record, position) => {
        replayed++;
        if (position !== 1000) return;
        // every session copying this log (the span being read, and the next one, begun)
        await withAdmin(async (admin) => {
          const ended = await admin.query<{ pid: number }>(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ledgerstore-read' AND query LIKE $1",
            [`%COPY%'${log}'%`],
          );
          assert.ok(ended.rows.length > 0, 'a COPY of the log was running');
          await until(
            async () =>
              (
                await admin.query<{ n: number }>(
                  'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)',
                  [ended.rows.map((r) => r.pid)],
                )
              ).rows[0]?.n === 0,
            'the read sessions to end',
          );
        });
      },
    });
    const e = await rejects(opening, 'LEDGER_IO', /reading records \d+ to \d+ failed/);
    assert.match(e.message, /terminating connection due to administrator command|Connection terminated/);
    assert.ok(replayed < COUNT, 'the open stopped short');
    // an unheard 'error' of a client surfaces after the call's own failure: give it the time to
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    process.off('uncaughtException', hear);
  }
  assert.equal(
    uncaught.map((e) => String(e)),
    [],
    'nothing was thrown at the process',
  );
});

test('a statement timeout during an open is told as one (SQLSTATE 57014), not as a failure to connect', async () => {
  const log = freshLog('deadline');
  // every statement JIT-compiled (tens of ms) under a 1 ms statement_timeout: the session's first
  // statement is cancelled by the server, whatever else the machine is doing
  const uri = await logUri(log, {
    statement_timeout: '1',
    options: '-c jit=on -c jit_above_cost=0 -c jit_inline_above_cost=0 -c jit_optimize_above_cost=0',
  });
  for (const readOnly of [false, true]) {
    const e = await rejects(
      postgresBackend(uri, { codec: honchoCodec }).open({ readOnly }),
      'LEDGER_IO',
      /failed: canceling statement due to statement timeout \(SQLSTATE 57014\); the statement ran longer than statement_timeout/,
    );
    assert.not.match(e.message, /cannot connect/, e.message);
  }
  // without it, the same log opens
  await (await postgresBackend(await logUri(log), { codec: honchoCodec }).open()).close();
});

test.run();
