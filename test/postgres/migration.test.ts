/**
 * The schema's versions: a fresh schema is `sql/v1.sql`, version 1 of `ledgerstore/postgres`;
 * the runner brings a schema through a later version's migration (a test-only one, in a file of
 * its own, as the next real version will be), in the open's transaction, and a step that fails
 * changes nothing; a schema of the pre-release builds (`ledgerstore/pg`, versions 1 to 5) is
 * refused by every open, with the runbook's words, and nothing is changed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FORMAT, MIGRATIONS, postgresBackend, SCHEMA_VERSION } from '../../backends/postgres/index.js';
import { PRE_RELEASE_FORMAT, PreReleaseSchemaError } from '../../backends/postgres/schema.js';
import { placeOf } from '../../backends/postgres/uri.js';
import { migrate } from '../../backends/postgres/versions.js';
import { LedgerIoError } from '../../lib/errors.js';
import { honchoCodec, type Record } from '../../lib/index.js';
import { all, decided, rejects, skip, turn } from '../support/ledger.js';
import { freshLog, logUri, otherSchema, withAdmin } from '../support/pg-cluster.js';

const record = (n: number): Record => decided(turn('m', n), n % 2 === 0 ? skip('m') : undefined);

/** A log's URI in the schema `schema`. */
async function uriIn(schema: string, log = freshLog()): Promise<string> {
  return (await logUri(log)).replace(/schema=[^&]+/, `schema=${schema}`);
}

test('a fresh schema is version 1 of ledgerstore/postgres, made from sql/v1.sql', async () => {
  assert.equal(
    MIGRATIONS.map((m) => [m.version, m.file.pathname.split('/').slice(-2).join('/')]),
    [[1, 'sql/v1.sql']],
  );
  assert.is(SCHEMA_VERSION, 1);
  const schema = await otherSchema('f');
  try {
    const writer = await postgresBackend(await uriIn(schema), { codec: honchoCodec }).open();
    assert.equal(await writer.append([record(0)]), { from: 0, head: 1 });
    await writer.close();
    await withAdmin(async (admin) => {
      assert.equal((await admin.query(`SELECT format, version FROM "${schema}".meta`)).rows, [
        { format: 'ledgerstore/postgres', version: 1 },
      ]);
    });
  } finally {
    await withAdmin((admin) => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  }
});

test('the runner: a later version migrates a version-1 schema in the transaction, records kept; a step that fails changes nothing', async () => {
  const schema = await otherSchema('r');
  const log = freshLog();
  const uri = await uriIn(schema, log);
  const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-migration-'));
  const file = (name: string, sql: string): URL => {
    writeFileSync(join(dir, name), sql);
    return pathToFileURL(join(dir, name));
  };
  const v2 = {
    version: 2,
    what: 'a note on each log',
    file: file('v2.sql', `ALTER TABLE :"schema".logs ADD COLUMN note text NOT NULL DEFAULT :'format';\n`),
  };
  const v3 = {
    version: 3,
    what: 'a step that fails half-way',
    file: file('v3.sql', 'ALTER TABLE :"schema".logs ADD COLUMN other text;\nSELECT * FROM :"schema".no_such_table;\n'),
  };
  try {
    const writer = await postgresBackend(uri, { codec: honchoCodec }).open();
    await writer.append([record(0), record(1)]);
    await writer.close();
    await withAdmin(async (admin) => {
      const place = placeOf(uri);
      await admin.query('BEGIN');
      await migrate(admin, place, 1, [...MIGRATIONS, v2]);
      await admin.query('COMMIT');
      assert.equal((await admin.query(`SELECT version FROM "${schema}".meta`)).rows, [{ version: 2 }]);
      assert.equal((await admin.query(`SELECT name, head, note FROM "${schema}".logs`)).rows, [
        { name: log, head: '2', note: FORMAT },
      ]);

      await admin.query('BEGIN');
      const e = await migrate(admin, place, 2, [...MIGRATIONS, v2, v3]).then(
        () => null,
        (failure: unknown) => failure,
      );
      await admin.query('ROLLBACK');
      assert.ok(e instanceof LedgerIoError, String(e));
      assert.match(
        String((e as Error).message),
        `migrating the schema ${schema} (version 3: a step that fails half-way) failed`,
      );
      assert.equal((await admin.query(`SELECT version FROM "${schema}".meta`)).rows, [{ version: 2 }], 'unchanged');
      assert.equal(
        (
          await admin.query(
            `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'other'`,
            [schema],
          )
        ).rows,
        [],
        'the first statement of the step is undone too',
      );
    });
    // a version this ledgerstore does not know (the test's 2) is refused, unchanged
    await rejects(postgresBackend(uri, { codec: honchoCodec }).open(), 'LEDGER_DAMAGED', /a later ledgerstore made it/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await withAdmin((admin) => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  }
});

test('a pre-release schema (ledgerstore/pg, versions 1 to 5) is refused by every open with the runbook, and nothing is changed', async () => {
  const schema = await otherSchema('p');
  const log = freshLog();
  const uri = await uriIn(schema, log);
  try {
    await withAdmin(async (admin) => {
      // what the pre-release builds left: their meta row, and a log of records
      await admin.query(`CREATE SCHEMA "${schema}"`);
      await admin.query(`CREATE TABLE "${schema}".meta (format text PRIMARY KEY, version integer NOT NULL)`);
      await admin.query(`INSERT INTO "${schema}".meta VALUES ($1, 3)`, [PRE_RELEASE_FORMAT]);
      await admin.query(`CREATE TABLE "${schema}".logs (name text PRIMARY KEY, head bigint NOT NULL DEFAULT 0)`);
      await admin.query(`INSERT INTO "${schema}".logs VALUES ($1, 1)`, [log]);
    });
    const backend = postgresBackend(uri, { codec: honchoCodec });
    for (const readOnly of [false, true]) {
      const e = await rejects(
        backend.open({ readOnly }),
        'LEDGER_OLD_FORMAT',
        new RegExp(
          `: the schema ${schema} was made by a pre-release build of ledgerstore \\(format ledgerstore/pg, version 3\\), which this ledgerstore neither reads nor migrates \\(it reads ledgerstore/postgres version 1\\); copy each log out with the build that made it .*see docs/runbook\\.md#postgres-pre-release-schema$`,
        ),
      );
      assert.ok(e instanceof PreReleaseSchemaError);
      assert.is(e.runbook, 'postgres-pre-release-schema');
      assert.not.match(e.message, /password|secret/);
    }
    await rejects(backend.drop(), 'LEDGER_OLD_FORMAT', /pre-release/);
    await withAdmin(async (admin) => {
      assert.equal((await admin.query(`SELECT format, version FROM "${schema}".meta`)).rows, [
        { format: PRE_RELEASE_FORMAT, version: 3 },
      ]);
      assert.equal(
        (
          await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [
            schema,
          ])
        ).rows,
        [{ table_name: 'logs' }, { table_name: 'meta' }],
        'no table made',
      );
      // the runbook's second way: the schema dropped, a writable open makes version 1
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    });
    const writer = await backend.open();
    assert.is(writer.head, 0);
    await writer.append([record(0)]);
    assert.equal(await all(writer), [record(0)]);
    await writer.close();
  } finally {
    await withAdmin((admin) => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  }
});

test.run();
