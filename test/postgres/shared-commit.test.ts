/**
 * Appends that find the log's append lock held (another writer is committing) wait for the next
 * commit, whoever makes it (schema version 4): several writers' batches in one commit, one WAL
 * flush, each still checked against the head it expected; and a batch that waited is never
 * written after its writer was told it was not.
 *
 * The moment is held on the server: the test's own session holds the append lock, so the
 * appends put their batches in the waiting table and wait; letting it go lets one of them
 * commit them all.
 */

import type pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postgresBackend } from '../../backends/postgres/index.js';
import { ConflictError, type EventLog, encodeRecord, honchoCodec, type Record } from '../../lib/index.js';
import { decided, failure, rejects, turn } from '../support/ledger.js';
import {
  batchesWaiting,
  freshLog,
  holdAppendLock,
  linesOf,
  logUri,
  pgServer,
  until,
  withAdmin,
} from '../support/pg-cluster.js';
import { PgProxy } from '../support/pg-proxy.js';

const record = (who: string, n: number): Record => decided(turn(who, n));

/**
 * With `writer`'s record `w 0` appended, holds the append lock from `admin` and starts the
 * append of `w 1`, once its batch waits in the waiting table; the lock's release is the caller's.
 */
async function oneBatchWaiting(
  writer: EventLog<Record>,
  admin: pg.Client,
  log: string,
): Promise<{ lock: { release: () => Promise<void> }; appending: Promise<unknown> }> {
  await writer.append([record('w', 0)]);
  const lock = await holdAppendLock(admin, log);
  const appending = writer.append([record('w', 1)]);
  appending.catch(() => undefined); // awaited by the caller
  await batchesWaiting(admin, log, 1);
  return { lock, appending };
}

test('batches that wait for the lock are written by one commit, each checked at the head it expected, in the order they came', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const { schema } = await pgServer();
  const [a, b, c] = await Promise.all([0, 1, 2].map(() => postgresBackend(uri, { codec: honchoCodec }).open()));
  if (a === undefined || b === undefined || c === undefined) throw new Error('three logs');
  await a.append([record('a', 0)]);
  await withAdmin(async (admin) => {
    const lock = await holdAppendLock(admin, log);
    const appendingA = a.append([record('a', 1), record('a', 2)], { expectedHead: 1, keys: ['a1', 'a2'] });
    await batchesWaiting(admin, log, 1);
    // b expected head 1 too, with keys of other items: it goes after a's batch
    const appendingB = b.append([record('b', 0)], { expectedHead: 1, keys: ['b0'] });
    await batchesWaiting(admin, log, 2);
    // c expected head 1 with no keys: a conflict once a's and b's batches are in
    const appendingC = c.append([record('c', 0)], { expectedHead: 1 });
    await batchesWaiting(admin, log, 3);
    assert.equal(await linesOf(log), [encodeRecord(record('a', 0))], 'nothing written while they wait');
    await lock.release();
    assert.equal(await appendingA, { from: 1, head: 3 });
    assert.equal(await appendingB, { from: 3, head: 4, passed: [record('a', 1), record('a', 2)] });
    const conflict = await failure(appendingC);
    assert.ok(conflict instanceof ConflictError, `c's append is a conflict: ${String(conflict)}`);
    assert.equal([conflict.expected, conflict.actual], [1, 4], 'at the head its turn found');
    const { rows } = await admin.query<{ commits: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS commits FROM "${schema}".records WHERE log = $1 AND position >= 1`,
      [log],
    );
    assert.equal(rows, [{ commits: 1 }], 'both batches written by one transaction');
    await batchesWaiting(admin, log, 0);
  });
  assert.equal(await linesOf(log), [record('a', 0), record('a', 1), record('a', 2), record('b', 0)].map(encodeRecord));
  assert.equal(await c.append([record('c', 0)], { expectedHead: 4 }), { from: 4, head: 5 }, 'c goes on');
  await Promise.all([a, b, c].map((l) => l.close()));
});

test('a batch that waited, its connection cut: its look-up takes it out of the waiting table, so no later commit writes it', async () => {
  const proxy = await PgProxy.start();
  try {
    const log = freshLog();
    const uri = await logUri(log);
    const writer = await postgresBackend(proxy.through(uri), { codec: honchoCodec }).open();
    const other = await postgresBackend(uri, { codec: honchoCodec }).open();
    await withAdmin(async (admin) => {
      const { lock, appending } = await oneBatchWaiting(writer, admin, log);
      const { rows } = await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'ledgerstore-append' AND wait_event = 'advisory'",
      );
      assert.is(rows.length, 1, 'one session waits for the lock');
      proxy.cut(false); // the server's session stays, waiting for the lock, its batch in the table
      // the look-up ends that session first, then waits for the lock
      await until(
        async () =>
          (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0]?.pid])).rows.length === 0,
        'the old session to be ended',
      );
      await lock.release();
      await rejects(appending, 'LEDGER_IO', /the connection was lost during an append .*the batch was not written/);
      await batchesWaiting(admin, log, 0);
    });
    assert.equal(await other.append([record('o', 0)]), { from: 1, head: 2 }, "the next commit is the other's alone");
    assert.equal(await linesOf(log), [record('w', 0), record('o', 0)].map(encodeRecord));
    await Promise.all([writer.close(), other.close()]);
  } finally {
    await proxy.close();
  }
});

test('a batch that waited longer than lock_timeout: found out as after a lost connection, refused as not written, and never written later', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const writer = await postgresBackend(uri, { codec: honchoCodec, timeouts: { lockMs: 200 } }).open();
  const other = await postgresBackend(uri, { codec: honchoCodec }).open();
  await withAdmin(async (admin) => {
    const { lock, appending } = await oneBatchWaiting(writer, admin, log);
    // the look-up waits for the lock too, and is tried again until it gets it
    await new Promise((resolve) => setTimeout(resolve, 600));
    await lock.release();
    const e = await rejects(appending, 'LEDGER_IO');
    assert.match(
      e.message,
      /an append failed after its batch waited for the log's lock \(.*lock timeout.*\); the batch was not written/,
    );
    await batchesWaiting(admin, log, 0);
  });
  assert.equal(await other.append([record('o', 0)]), { from: 1, head: 2 });
  assert.equal(await linesOf(log), [record('w', 0), record('o', 0)].map(encodeRecord));
  assert.equal(await writer.append([record('w', 1)]), { from: 2, head: 3 }, 'the writer goes on');
  await Promise.all([writer.close(), other.close()]);
});

test('a batch that waited and was written, its answer taken, then a failure: found out by its id, and appended once', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const { schema } = await pgServer();
  const writer = await postgresBackend(uri, { codec: honchoCodec }).open();
  await withAdmin(async (admin) => {
    // once the writer's own commit wrote its batch and let the lock go, the removal of its row
    // from the waiting table fails, once (a sequence: its count survives the failure's rollback);
    // the look-up's removal, after it, goes through
    const s = `"${schema}"`;
    await admin.query(`CREATE SEQUENCE ${s}.removals`);
    await admin.query(`CREATE FUNCTION ${s}.fail_once() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF nextval('${s}.removals') = 1 THEN RAISE EXCEPTION 'the test fails this removal'; END IF;
        RETURN OLD;
      END $fn$`);
    await admin.query(
      `CREATE TRIGGER fail_once BEFORE DELETE ON ${s}.waiting FOR EACH ROW WHEN (OLD.log = ${`'${log}'`}) EXECUTE FUNCTION ${s}.fail_once()`,
    );
    try {
      const { lock, appending } = await oneBatchWaiting(writer, admin, log);
      await lock.release();
      assert.equal(await appending, { from: 1, head: 2 }, 'written, and so told');
      assert.equal(
        (await admin.query(`SELECT last_value::int AS n FROM ${s}.removals`)).rows,
        [{ n: 2 }],
        'the removal failed once, then went through',
      );
      await batchesWaiting(admin, log, 0);
    } finally {
      await admin.query(`DROP TRIGGER fail_once ON ${s}.waiting`);
      await admin.query(`DROP FUNCTION ${s}.fail_once()`);
      await admin.query(`DROP SEQUENCE ${s}.removals`);
    }
  });
  assert.equal(await linesOf(log), [record('w', 0), record('w', 1)].map(encodeRecord), 'once');
  assert.equal(await writer.append([record('w', 2)]), { from: 2, head: 3 }, 'the writer goes on');
  await writer.close();
});

test('a batch given up after its wait failed and its look-up ran out of time: never written by a later commit', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const writer = await postgresBackend(uri, { codec: honchoCodec, timeouts: { lockMs: 200, resolveMs: 600 } }).open();
  await withAdmin(async (admin) => {
    const { lock, appending } = await oneBatchWaiting(writer, admin, log);
    // the lock is held past the wait's lock_timeout and the look-up's resolveMs: the outcome is unknown
    const e = await rejects(appending, 'LEDGER_IO', /could not be found out within 600 ms/);
    assert.match(
      e.message,
      /every append is refused until the ledger is reopened, which reads what the database holds/,
    );
    await lock.release();
  });
  await writer.close();
  // reopened, the log does not hold the batch, and no later commit writes it behind the reader's back
  const again = await postgresBackend(uri, { codec: honchoCodec }).open();
  assert.is(again.head, 1);
  assert.equal(await again.append([record('o', 0)]), { from: 1, head: 2 });
  assert.equal(await linesOf(log), [record('w', 0), record('o', 0)].map(encodeRecord));
  await withAdmin((admin) => batchesWaiting(admin, log, 0));
  await again.close();
});

test('a batch whose writer’s session ended while it waited: never written by a later commit', async () => {
  const log = freshLog();
  const uri = await logUri(log);
  const { schema } = await pgServer();
  const other = await postgresBackend(uri, { codec: honchoCodec }).open();
  await other.append([record('o', 0)]);
  await withAdmin(async (admin) => {
    const lock = await holdAppendLock(admin, log);
    // a writer whose process is gone: its session waits for the lock with its batch in the table, then ends
    await withAdmin(async (gone) => {
      const { rows } = await gone.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const calling = gone
        .query(`CALL "${schema}".append($1, NULL, 0, gen_random_uuid(), 1, $2, NULL, NULL, NULL, NULL, NULL)`, [
          log,
          encodeRecord(record('w', 1)),
        ])
        .catch((e: unknown) => e);
      await batchesWaiting(admin, log, 1);
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
      assert.instance(await calling, Error, 'its session was ended');
    }).catch(() => undefined); // the ended session's client cannot end cleanly
    await lock.release();
  });
  assert.equal(
    await other.append([record('o', 1)]),
    { from: 1, head: 2 },
    'the next commit is the live writer’s alone',
  );
  assert.equal(await linesOf(log), [record('o', 0), record('o', 1)].map(encodeRecord));
  await withAdmin((admin) => batchesWaiting(admin, log, 0));
  await other.close();
});

test.run();
