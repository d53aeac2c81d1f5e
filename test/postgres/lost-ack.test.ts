/**
 * A connection lost in the middle of an append never turns into a wrong answer: the append is
 * found committed (by its batch id) and resolves, or is known absent and is refused, or, when
 * that cannot be found out, the log stops until it is reopened. Never "refused but present",
 * never a batch written twice.
 *
 * The moment is held on the server: the test's own session locks the log's row, so the append
 * waits for it inside the server; then the appender's session is terminated
 * (`pg_terminate_backend`), or its connection is cut by a proxy in between (`pg-proxy.ts`),
 * which can also let the server commit while the client never hears of it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type PostgresBackend, postgresBackend } from '../../backends/postgres/index.js';
import { type AppendOptions, type EventLog, encodeRecord, honchoCodec, type Record } from '../../lib/index.js';
import { all, decided, rejects, turn } from '../support/ledger.js';
import {
  freshLog,
  holdLogLock,
  linesOf,
  logUri,
  pgServer,
  until,
  waitingAppender,
  withAdmin,
} from '../support/pg-cluster.js';
import { PgProxy } from '../support/pg-proxy.js';

const record = (n: number): Record => decided(turn('lost', n));
const lines = (from: number, to: number): string[] =>
  Array.from({ length: to - from }, (_, n) => encodeRecord(record(from + n)));

const backend = (uri: string, resolveMs = 10_000): PostgresBackend<Record> =>
  postgresBackend(uri, { codec: honchoCodec, timeouts: { resolveMs } });

/** Runs `body` with a proxy, closed afterwards whatever happens. */
async function withProxy(body: (proxy: PgProxy) => Promise<void>): Promise<void> {
  const proxy = await PgProxy.start();
  try {
    await body(proxy);
  } finally {
    await proxy.close();
  }
}

/**
 * Appends `batch` to `writer` (whose connection goes through `proxy`) with the server's answers
 * lost, and waits until the server has committed it (the log's head at `head`): the append is
 * then still waiting for an answer that will never come.
 */
async function commitUnheard(
  proxy: PgProxy,
  writer: EventLog<Record>,
  log: string,
  batch: readonly Record[],
  head: number,
  options?: AppendOptions,
): Promise<{ appending: Promise<unknown> }> {
  const { schema } = await pgServer();
  proxy.loseReplies();
  const appending = writer.append(batch, options);
  appending.catch(() => undefined); // awaited by the caller, after the cut
  await withAdmin(async (admin) =>
    until(
      async () =>
        (await admin.query(`SELECT head FROM "${schema}".logs WHERE name = $1`, [log])).rows[0]?.head === String(head),
      'the batch to commit',
    ),
  );
  return { appending }; // in an object: an async function's promise would wait for it
}

test('the appending session terminated while it waits for the lock: refused as not written, absent for good, and the log goes on', async () => {
  const log = freshLog();
  const writer = await backend(await logUri(log)).open();
  await writer.append([record(0)]);
  await withAdmin(async (admin) => {
    const lock = await holdLogLock(admin, log);
    const appending = writer.append([record(1), record(2)]);
    const pid = await waitingAppender(admin);
    await withAdmin(async (other) => void (await other.query('SELECT pg_terminate_backend($1)', [pid])));
    const e = await rejects(appending, 'LEDGER_IO');
    assert.match(
      e.message,
      /the connection was lost during an append \(terminating connection due to administrator command \(SQLSTATE 57P01\)\); the batch was not written/,
    );
    await lock.release();
  });
  assert.equal(await linesOf(log), lines(0, 1), 'nothing of the batch, after the lock was let go');
  assert.equal(await writer.append([record(1)]), { from: 1, head: 2 }, 'the log goes on, on a new session');
  await writer.close();
});

test('a connection cut while the append waits for the lock, its session still there: fenced before the look-up, so it can never commit later', () =>
  withProxy(async (proxy) => {
    const log = freshLog();
    const writer = await backend(proxy.through(await logUri(log))).open();
    await writer.append([record(0)]);
    await withAdmin(async (admin) => {
      const lock = await holdLogLock(admin, log);
      const appending = writer.append([record(1)]);
      const pid = await waitingAppender(admin);
      proxy.cut(false); // the server's session stays, waiting for the lock
      await rejects(appending, 'LEDGER_IO', /the batch was not written/);
      // asked from outside the lock's transaction, whose view of pg_stat_activity is kept from its start
      const { rows } = await withAdmin((other) =>
        other.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pid]),
      );
      assert.equal(rows, [{ n: 0 }], 'the old session was ended before the answer');
      await lock.release();
    });
    assert.equal(await linesOf(log), lines(0, 1), 'the batch did not land once the lock was free');
    assert.equal(await writer.append([record(1)]), { from: 1, head: 2 });
    await writer.close();
  }));

test('a commit whose answer is lost, then the connection: found by its batch id, resolved as appended, written once', () =>
  withProxy(async (proxy) => {
    const log = freshLog();
    const writer = await backend(proxy.through(await logUri(log))).open();
    await writer.append([record(0)]);
    const { appending } = await commitUnheard(proxy, writer, log, [record(1), record(2)], 3);
    proxy.cut(true);
    assert.equal(await appending, { from: 1, head: 3 });
    assert.is(writer.head, 3);
    assert.equal(await writer.append([record(3)]), { from: 3, head: 4 });
    assert.equal(await linesOf(log), lines(0, 4), 'each record once');
    await writer.close();
  }));

test('a keyed commit whose answer is lost, that went past another writer’s record: resolved with the record it went past', () =>
  withProxy(async (proxy) => {
    const log = freshLog();
    const uri = await logUri(log);
    const writer = await backend(proxy.through(uri)).open();
    await writer.append([record(0)]);
    const other = await backend(uri).open();
    await other.append([record(1)], { expectedHead: 1, keys: ['1'] });
    const { appending } = await commitUnheard(proxy, writer, log, [record(2)], 3, { expectedHead: 1, keys: ['2'] });
    proxy.cut(true);
    assert.equal(await appending, { from: 2, head: 3, passed: [record(1)] });
    assert.is(writer.head, 3);
    assert.equal(await linesOf(log), lines(0, 3), 'each record once');
    await other.close();
    await writer.close();
  }));

test('a lost connection whose outcome cannot be found out (the server out of reach): refused, the log stops, and a reopen reads the truth', () =>
  withProxy(async (proxy) => {
    const log = freshLog();
    const target = backend(proxy.through(await logUri(log)), 300);
    const writer = await target.open();
    await writer.append([record(0)]);
    const { appending } = await commitUnheard(proxy, writer, log, [record(1)], 2);
    proxy.refusing = true;
    proxy.cut(true);
    const e = await rejects(appending, 'LEDGER_IO');
    assert.match(
      e.message,
      /whether its batch was written could not be found out within 300 ms .*; every append is refused until the ledger is reopened/,
    );
    await rejects(writer.append([record(2)]), 'LEDGER_STOPPED', /an earlier write failed/);
    await writer.close();
    proxy.refusing = false;
    const again = await target.open();
    assert.is(again.head, 2, 'the batch had committed');
    assert.equal(await all(again), [record(0), record(1)]);
    assert.equal(await again.append([record(2)]), { from: 2, head: 3 });
    await again.close();
  }));

test('a lock held longer than lock_timeout: refused by the server, nothing written, and the log goes on on the same session', async () => {
  const log = freshLog();
  const writer = await postgresBackend(await logUri(log), { codec: honchoCodec, timeouts: { lockMs: 200 } }).open();
  await writer.append([record(0)]);
  await withAdmin(async (admin) => {
    const lock = await holdLogLock(admin, log);
    await rejects(
      writer.append([record(1)]),
      'LEDGER_IO',
      /appending failed: canceling statement due to lock timeout \(SQLSTATE 55P03\); another session held the log longer than lock_timeout; nothing was written/,
    );
    await lock.release();
  });
  assert.equal(await writer.append([record(1)]), { from: 1, head: 2 });
  assert.equal(await linesOf(log), lines(0, 2));
  await writer.close();
});

test.run();
