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
      assert.is(
        (e as { code?: unknown } | null)?.code,
        '42809',
        'append is a procedure now: a version-3 writer cannot call it',
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

test.run();
