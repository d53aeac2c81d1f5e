/**
 * A schema of an earlier version: a writable open migrates it, in place and whole, and the log
 * goes on with what it held; a read-only open changes nothing and says what to do; a writer of
 * the earlier version, still running, can no longer write it.
 *
 * The version-1 schema is made by its own migration (`MIGRATIONS[0]`, never changed once
 * released), and written by its own append function, as a ledgerstore of that version did.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MIGRATIONS, postgresBackend, SCHEMA_VERSION } from '../../backends/postgres/index.js';
import { encodeRecord, honchoCodec, type Record } from '../../lib/index.js';
import { all, decided, rejects, skip, turn } from '../support/ledger.js';
import { freshLog, logUri, otherSchema, withAdmin } from '../support/pg-cluster.js';

const record = (n: number): Record => decided(turn('old', n), n % 2 === 0 ? skip('old') : undefined);

test('a version-1 schema: read-only it is refused unchanged; a writable open migrates it and the log goes on', async () => {
  const schema = await otherSchema('m');
  const log = freshLog();
  const uri = (await logUri(log)).replace(/schema=[^&]+/, `schema=${schema}`);
  const [first] = MIGRATIONS;
  assert.is(first?.version, 1);
  await withAdmin(async (admin) => {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    for (const statement of first?.statements(schema) ?? []) await admin.query(statement);
    await admin.query(`INSERT INTO "${schema}".logs (name) VALUES ($1)`, [log]);
    for (const batch of [[0, 1], [2], [3, 4, 5]])
      await admin.query(`SELECT * FROM "${schema}".append($1, NULL, $2, $3)`, [
        log,
        randomUUID(),
        batch.map((n) => encodeRecord(record(n))),
      ]);
  });
  const old = Array.from({ length: 6 }, (_, n) => record(n));
  try {
    const backend = postgresBackend(uri, { codec: honchoCodec });
    await rejects(
      backend.open({ readOnly: true }),
      'LEDGER_DAMAGED',
      new RegExp(
        `the schema ${schema} is in version 1 of ledgerstore's PostgreSQL format, which this ledgerstore does not read \\(it reads version ${SCHEMA_VERSION}\\): open it for writing once, which migrates it`,
      ),
    );
    await withAdmin(async (admin) => {
      assert.equal((await admin.query(`SELECT version FROM "${schema}".meta`)).rows, [{ version: 1 }], 'unchanged');
    });

    const writer = await backend.open();
    assert.is(writer.head, 6);
    assert.equal(await all(writer), old, 'every record it held, in order');
    assert.equal(await writer.append([record(6), record(7)]), { from: 6, head: 8 });
    await withAdmin(async (admin) => {
      assert.equal((await admin.query(`SELECT version FROM "${schema}".meta`)).rows, [{ version: SCHEMA_VERSION }]);
      assert.equal(
        (await admin.query('SELECT to_regclass($1) AS there', [`"${schema}".batches`])).rows,
        [{ there: null }],
        'the batches table is gone',
      );
      const { rows } = await admin.query<{ position: string }>(
        `SELECT position FROM "${schema}".records WHERE log = $1 AND batch IS NOT NULL`,
        [log],
      );
      assert.equal(rows, [{ position: '6' }], "the new batch's id is on its first record");
      // a ledgerstore of version 1 still running: its append is refused, nothing written
      const e = await admin
        .query(`SELECT * FROM "${schema}".append($1, NULL, $2, $3)`, [log, randomUUID(), [encodeRecord(record(8))]])
        .then(
          () => null,
          (failure: unknown) => failure,
        );
      assert.is((e as { code?: unknown } | null)?.code, '42883', 'no function of the old signature');
    });
    await writer.close();
    const reader = await backend.open({ readOnly: true });
    assert.equal(await all(reader), [...old, record(6), record(7)]);
    await reader.close();
  } finally {
    await withAdmin((admin) => admin.query(`DROP SCHEMA "${schema}" CASCADE`));
  }
});

test('a version-3 schema, written by its keyed function: a writable open migrates it to shared commits, the old function gone', async () => {
  const schema = await otherSchema('m');
  const log = freshLog();
  const uri = (await logUri(log)).replace(/schema=[^&]+/, `schema=${schema}`);
  const upTo3 = MIGRATIONS.filter((m) => m.version <= 3);
  assert.equal(
    upTo3.map((m) => m.version),
    [1, 2, 3],
  );
  const callV3 = `SELECT * FROM "${schema}".append($1, $2, $3, $4, $5, $6)`;
  await withAdmin(async (admin) => {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    for (const migration of upTo3) for (const statement of migration.statements(schema)) await admin.query(statement);
    await admin.query(`UPDATE "${schema}".meta SET version = 3`);
    await admin.query(`INSERT INTO "${schema}".logs (name) VALUES ($1)`, [log]);
    for (const batch of [[0, 1], [2]])
      await admin.query(callV3, [
        log,
        batch[0],
        batch[0],
        randomUUID(),
        batch.map((n) => encodeRecord(record(n))),
        batch.map((n) => `k${n}`),
      ]);
  });
  const old = Array.from({ length: 3 }, (_, n) => record(n));
  try {
    const backend = postgresBackend(uri, { codec: honchoCodec });
    await rejects(backend.open({ readOnly: true }), 'LEDGER_DAMAGED', /is in version 3 .*open it for writing once/);
    const writer = await backend.open();
    assert.is(writer.head, 3);
    assert.equal(await all(writer), old, 'every record it held, in order');
    assert.equal(await writer.append([record(3)], { expectedHead: 3, keys: ['k3'] }), { from: 3, head: 4 });
    await withAdmin(async (admin) => {
      assert.equal((await admin.query(`SELECT version FROM "${schema}".meta`)).rows, [{ version: SCHEMA_VERSION }]);
      assert.equal(
        (await admin.query(`SELECT count(*)::int AS n FROM "${schema}".waiting`)).rows,
        [{ n: 0 }],
        'the waiting table is there, and empty',
      );
      const e = await admin.query(callV3, [log, 4, 4, randomUUID(), [encodeRecord(record(4))], ['k4']]).then(
        () => null,
        (failure: unknown) => failure,
      );
      // a procedure since version 4 (42809), of other arguments since version 5 (42883)
      assert.ok(
        ['42809', '42883'].includes(String((e as { code?: unknown } | null)?.code)),
        `a version-3 writer cannot call append: ${String(e)}`,
      );
    });
    await writer.close();
    const reader = await backend.open({ readOnly: true });
    assert.equal(await all(reader), [...old, record(3)]);
    await reader.close();
  } finally {
    await withAdmin((admin) => admin.query(`DROP SCHEMA "${schema}" CASCADE`));
  }
});

test('a version-4 schema, written by its procedure: a writable open migrates it to one text of lines, and a batch left waiting is still written', async () => {
  const schema = await otherSchema('m');
  const log = freshLog();
  const uri = (await logUri(log)).replace(/schema=[^&]+/, `schema=${schema}`);
  const upTo4 = MIGRATIONS.filter((m) => m.version <= 4);
  assert.equal(
    upTo4.map((m) => m.version),
    [1, 2, 3, 4],
  );
  const callV4 = `CALL "${schema}".append($1, $2, $3, $4, $5, $6, NULL, NULL, NULL, NULL)`;
  const left = randomUUID();
  await withAdmin(async (admin) => {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    for (const migration of upTo4) for (const statement of migration.statements(schema)) await admin.query(statement);
    await admin.query(`UPDATE "${schema}".meta SET version = 4`);
    await admin.query(`INSERT INTO "${schema}".logs (name) VALUES ($1)`, [log]);
    for (const batch of [[0, 1], [2]])
      await admin.query(callV4, [
        log,
        batch[0],
        batch[0],
        randomUUID(),
        batch.map((n) => encodeRecord(record(n))),
        batch.map((n) => `k${n}`),
      ]);
    // a version-4 writer's batch that waited for the lock, and that no commit took yet
    await admin.query(
      `INSERT INTO "${schema}".waiting (log, batch, expected, known, lines, keys) VALUES ($1, $2, NULL, 3, $3, $4)`,
      [log, left, [encodeRecord(record(3))], ['k3']],
    );
  });
  const old = Array.from({ length: 3 }, (_, n) => record(n));
  try {
    const backend = postgresBackend(uri, { codec: honchoCodec });
    await rejects(backend.open({ readOnly: true }), 'LEDGER_DAMAGED', /is in version 4 .*open it for writing once/);
    const writer = await backend.open();
    assert.is(writer.head, 3);
    assert.equal(await all(writer), old, 'every record it held, in order');
    // the batch left waiting goes first, in the commit that writes this one, which goes past it
    assert.equal(await writer.append([record(4), record(5)], { expectedHead: 3, keys: ['k4', 'k5'] }), {
      from: 4,
      head: 6,
      passed: [record(3)],
    });
    // the records the version-4 procedure wrote keep their keys' hashes: a key among them clashes
    await rejects(writer.append([record(9)], { expectedHead: 1, keys: ['k2'] }), 'LEDGER_CONFLICT', /\b6\b/);
    await withAdmin(async (admin) => {
      assert.equal((await admin.query(`SELECT version FROM "${schema}".meta`)).rows, [{ version: SCHEMA_VERSION }]);
      assert.equal(
        (
          await admin.query<{ position: string }>(
            `SELECT position FROM "${schema}".records WHERE log = $1 AND batch = $2`,
            [log, left],
          )
        ).rows,
        [{ position: '3' }],
        'the waiting batch, written at the head it found',
      );
      assert.equal(
        (await admin.query(`SELECT ok, "from", head FROM "${schema}".waiting WHERE batch = $1`, [left])).rows,
        [{ ok: true, from: '3', head: '4' }],
        'its answer kept for its writer to take',
      );
      assert.equal(
        (await admin.query(`SELECT unfinished FROM "${schema}".logs WHERE name = $1`, [log])).rows,
        [{ unfinished: null }],
        'a log of version 4 is finished: no copy is filling it',
      );
      const e = await admin.query(callV4, [log, 6, 6, randomUUID(), [encodeRecord(record(6))], ['k6']]).then(
        () => null,
        (failure: unknown) => failure,
      );
      assert.is((e as { code?: unknown } | null)?.code, '42883', 'no procedure of the version-4 signature');
    });
    await writer.close();
    const reader = await backend.open({ readOnly: true });
    assert.equal(await all(reader), [...old, record(3), record(4), record(5)]);
    await reader.close();
  } finally {
    await withAdmin((admin) => admin.query(`DROP SCHEMA "${schema}" CASCADE`));
  }
});

test.run();
