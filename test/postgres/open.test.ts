/**
 * Opening a PostgreSQL log with bad input: a URI that names nothing, a server that is not there
 * or refuses the login, a schema of another version, a role that may only read, a server that
 * does not sync. Each is refused with a `LedgerError` that says what and what to do, and
 * changes nothing; a read-only open never writes, not even the schema. And the append function
 * makes every commit wait for its WAL flush whatever the session says.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type PostgresBackend, postgresBackend } from '../../backends/postgres/index.js';
import { checkServer, SCHEMA_VERSION } from '../../backends/postgres/schema.js';
import { placeOf } from '../../backends/postgres/uri.js';
import { backendFor, encodeRecord, honchoCodec, Ledger, type Record } from '../../lib/index.js';
import { printableTarget } from '../../lib/printable.js';
import { all, decided, rejects, skip, turn } from '../support/ledger.js';
import { freshLog, logUri, otherSchema, pgBackend, pgServer, roleUri, withAdmin } from '../support/pg-cluster.js';

const A = decided(turn('open', 1));
const B = decided(turn('open', 2), skip('nothing new'));

const backendAt = (uri: string): PostgresBackend<Record> =>
  postgresBackend(uri, { codec: honchoCodec, timeouts: { connectMs: 3000 } });

test('a URI that names no log is refused before anything is connected to, saying what is wrong', () => {
  const refused = (uri: string, why: RegExp): void => {
    try {
      postgresBackend(uri, { codec: honchoCodec });
    } catch (e) {
      assert.ok(e instanceof Error && 'code' in e && e.code === 'LEDGER_BAD_TARGET', `${uri}: ${String(e)}`);
      assert.match(e.message, why);
      assert.not.match(e.message, /hunter2/, 'the password is never shown');
      return;
    }
    assert.unreachable(`${uri} was taken`);
  };
  refused('postgres://u@db/x?log=two%20words', /the log name "two words" is not 1 to 48 of/);
  refused(`postgres://u@db/x?log=${'a'.repeat(49)}`, /is not 1 to 48/);
  refused('postgres://u@db/x?log=a&log=b', /log= is given 2 times/);
  refused('postgres://u@db/x?schema=Ledger', /the schema name "Ledger" is not 1 to 14 of a-z 0-9 _/);
  refused('postgres://u:hunter2@[db/x', /not a URI that node-postgres can read/);
  refused(
    'postgresql://bob:hunter2@/x?host=/run/postgresql',
    /a user or password needs a host in the URI \(for a Unix socket, give them as query parameters: /,
  );
  assert.throws(() => backendFor('postgresql://u@db/x?log=a/b'), /the log name "a\/b"/);
});

test("a log's name is its URI without the password, with its log", () => {
  assert.is(
    postgresBackend('postgres://bx:hunter2@db.example:5432/bx', { codec: honchoCodec }).name,
    'postgres://bx@db.example:5432/bx?log=honcho',
  );
  assert.is(
    backendFor('postgresql://bx@db.example/bx?log=ops&schema=ls').name,
    'postgresql://bx@db.example/bx?log=ops&schema=ls',
  );
  assert.is(
    postgresBackend(
      { host: '/run/postgresql', user: 'bx', password: 'hunter2', database: 'bx', log: 'ops' },
      { codec: honchoCodec },
    ).name,
    'postgres://bx@/bx?host=/run/postgresql&log=ops',
  );
  // The CLI prints the target as typed: the backend's name of a socket URI must read the same.
  const typed = 'postgresql:///memoryd?host=/tmp/pg sock&port=5433&user=memoryd&password=pw&log=honcho';
  assert.is(backendFor(typed).name, 'postgresql:///memoryd?host=/tmp/pg sock&port=5433&user=memoryd&log=honcho');
  assert.is(backendFor('postgresql:///m?host=%2Ftmp%2Fpg&log=x').name, 'postgresql:///m?host=%2Ftmp%2Fpg&log=x');
  assert.is(
    backendFor('postgresql:///memoryd?host=/tmp/pg&port=5433&user=memoryd&timeout=5s').name,
    printableTarget('postgresql:///memoryd?host=/tmp/pg&port=5433&user=memoryd&log=honcho'),
  );
  assert.equal(placeOf('postgres://bx:hunter2@db/bx?log=ops&sslmode=disable').connection, {
    connectionString: 'postgres://bx:hunter2@db/bx?sslmode=disable',
  });
});

test('a server that is not there: LEDGER_IO that says so, for writing and for reading', async () => {
  for (const uri of [
    'postgresql:///postgres?host=%2Fnonexistent-ledgerstore&port=5432&user=x',
    'postgres://x@127.0.0.1:1/postgres',
  ]) {
    for (const readOnly of [false, true]) {
      const e = await rejects(backendAt(uri).open({ readOnly }), 'LEDGER_IO');
      assert.match(
        e.message,
        /cannot connect to PostgreSQL: no server answers there \((ENOENT|ECONNREFUSED)\); check that PostgreSQL runs/,
      );
      assert.is((e as { runbook?: unknown }).runbook, 'postgres-server', "the server's entry, for a reader too");
    }
  }
});

test("a wrong password: LEDGER_IO with the server's words and what to check; the right one opens", async () => {
  const log = freshLog();
  await (await (await pgBackend(log)).open()).close(); // the schema, made
  const uri = await roleUri('lst_pw', 'right', log, async (admin, schema) => {
    await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO lst_pw`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO lst_pw`);
  });
  const wrong = uri.replace('password=right', 'password=hunter2');
  const e = await rejects(backendAt(wrong).open(), 'LEDGER_IO');
  assert.match(
    e.message,
    /password authentication failed for user "lst_pw" \(SQLSTATE 28P01\); check the user, and the password in PGPASSWORD/,
  );
  assert.not.match(e.message, /hunter2/);
  const bare = new URL(uri);
  bare.searchParams.delete('password');
  bare.password = '';
  const none = await rejects(backendAt(bare.href).open(), 'LEDGER_IO');
  assert.match(
    none.message,
    /cannot connect to PostgreSQL: the server asks for a password and none was given; put it in PGPASSWORD or ~\/\.pgpass/,
  );
  const reader = await backendAt(uri).open({ readOnly: true });
  assert.is(reader.head, 0);
  await reader.close();
});

test('a role that may only read: a writable open is refused with what it lacks and changes nothing; a read-only open reads', async () => {
  const log = freshLog();
  const writer = await (await pgBackend(log)).open();
  await writer.append([A, B]);
  await writer.close();
  const other = freshLog();
  const grantReads = async (admin: import('pg').Client, schema: string): Promise<void> => {
    await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO lst_ro`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO lst_ro`);
  };
  const uri = await roleUri('lst_ro', 'ro', log, grantReads);
  for (const name of [log, other]) {
    const e = await rejects(backendAt(uri.replace(`log=${log}`, `log=${name}`)).open(), 'LEDGER_IO');
    assert.match(
      e.message,
      /the role lst_ro may not write this log: it lacks INSERT on "lst_\d+"\.logs, UPDATE on "lst_\d+"\.logs, INSERT on "lst_\d+"\.records, INSERT on "lst_\d+"\.waiting, UPDATE on "lst_\d+"\.waiting, DELETE on "lst_\d+"\.waiting; open the ledger read-only, or grant them/,
    );
  }
  const { schema } = await pgServer();
  await withAdmin(async (admin) => {
    const { rows } = await admin.query(`SELECT name, head FROM "${schema}".logs WHERE name IN ($1, $2)`, [log, other]);
    assert.equal(rows, [{ name: log, head: '2' }], 'no row for the other log, the head unchanged');
  });
  const reader = await backendAt(uri).open({ readOnly: true });
  assert.equal(await all(reader), [A, B]);
  await rejects(reader.append([A]), 'LEDGER_READ_ONLY');
  await reader.close();

  // and in a schema that is not there yet, which it may not create
  const fresh = await otherSchema('ro');
  const e = await rejects(backendAt(uri.replace(`schema=${schema}`, `schema=${fresh}`)).open(), 'LEDGER_IO');
  assert.match(
    e.message,
    new RegExp(`creating the schema ${fresh} failed: permission denied for database postgres \\(SQLSTATE 42501\\)`),
  );
  await withAdmin(async (admin) => {
    const { rows } = await admin.query('SELECT to_regnamespace($1) AS there', [fresh]);
    assert.equal(rows, [{ there: null }]);
  });
});

test('a read-only open writes nothing, not even the schema: an empty log where there is none', async () => {
  const fresh = await otherSchema('r');
  const uri = (await logUri(freshLog())).replace(/schema=[^&]+/, `schema=${fresh}`);
  const reader = await backendAt(uri).open({ readOnly: true });
  assert.is(reader.head, 0);
  assert.equal(await all(reader), []);
  assert.equal(await reader.resumePoint(), { position: 0, cursor: null, fingerprint: '' });
  await reader.close();
  const { schema } = await pgServer();
  const unknown = freshLog();
  const other = await (await pgBackend(unknown)).open({ readOnly: true });
  assert.is(other.head, 0);
  await other.close();
  await withAdmin(async (admin) => {
    assert.equal(
      (await admin.query('SELECT to_regnamespace($1) AS there', [fresh])).rows,
      [{ there: null }],
      'no schema made',
    );
    assert.equal(
      (await admin.query(`SELECT name FROM "${schema}".logs WHERE name = $1`, [unknown])).rows,
      [],
      'no log row made',
    );
  });
});

test('a schema of another version is refused, for writing and reading, and nothing is changed', async () => {
  const fresh = await otherSchema('v');
  const uri = (await logUri(freshLog())).replace(/schema=[^&]+/, `schema=${fresh}`);
  const writer = await backendAt(uri).open();
  await writer.append([A]);
  await writer.close();
  await withAdmin(async (admin) => {
    await admin.query(`UPDATE "${fresh}".meta SET version = ${SCHEMA_VERSION + 1}`);
    try {
      for (const readOnly of [false, true]) {
        const e = await rejects(backendAt(uri).open({ readOnly }), 'LEDGER_DAMAGED');
        assert.match(
          e.message,
          new RegExp(
            `:0: the schema ${fresh} is in version ${SCHEMA_VERSION + 1} of ledgerstore's PostgreSQL format, which this ledgerstore does not read \\(it reads version ${SCHEMA_VERSION}\\): a later ledgerstore made it`,
          ),
        );
      }
      assert.equal((await admin.query(`SELECT version FROM "${fresh}".meta`)).rows, [{ version: SCHEMA_VERSION + 1 }]);
      assert.equal((await admin.query(`SELECT line FROM "${fresh}".records`)).rows, [{ line: encodeRecord(A) }]);
      await admin.query(`DELETE FROM "${fresh}".meta`);
      await rejects(backendAt(uri).open(), 'LEDGER_DAMAGED', /has a meta table that is not ledgerstore's/);
    } finally {
      await admin.query(`DROP SCHEMA "${fresh}" CASCADE`);
    }
  });
});

test('the server is checked: UTF8 for any open; for writing, fsync on and not a standby', async () => {
  const place = placeOf('postgres://u@db/x');
  const server = (settings: { encoding?: string; fsync?: string; recovery?: boolean; readonly?: string }) => ({
    query: async () =>
      ({ rows: [{ encoding: 'UTF8', fsync: 'on', recovery: false, readonly: 'off', ...settings }] }) as never,
  });
  await checkServer(server({}), place, true);
  await checkServer(server({ fsync: 'off', recovery: true }), place, false);
  await rejects(
    checkServer(server({ encoding: 'SQL_ASCII' }), place, false),
    'LEDGER_IO',
    /the database's encoding is SQL_ASCII; ledgerstore stores records as UTF-8 text and needs a UTF8 database/,
  );
  await rejects(
    checkServer(server({ fsync: 'off' }), place, true),
    'LEDGER_IO',
    /the server runs with fsync=off, so an acknowledged append would not survive a crash of its machine/,
  );
  await rejects(
    checkServer(server({ recovery: true }), place, true),
    'LEDGER_IO',
    /the server accepts only reads \(a standby/,
  );
  await rejects(checkServer(server({ readonly: 'on' }), place, true), 'LEDGER_IO', /the server accepts only reads/);
  // and the real one passes, for writing
  const ledger = await Ledger.open(await logUri(freshLog()));
  await ledger.close();
});

test('the append function makes its commit wait for the WAL flush even where the session has synchronous_commit off', async () => {
  const log = freshLog();
  await (await (await pgBackend(log)).open()).close();
  const { schema } = await pgServer();
  await withAdmin(async (admin) => {
    // WAL flushes counted by the server, this session's counts sent to it first
    const flushes = async (): Promise<number> => {
      await admin.query('SELECT pg_stat_force_next_flush()');
      await admin.query('SELECT 1');
      return Number((await admin.query<{ n: string }>('SELECT wal_sync AS n FROM pg_stat_wal')).rows[0]?.n);
    };
    await admin.query('SET synchronous_commit = off');
    const before = await flushes();
    for (let n = 0; n < 30; n++)
      await admin.query(
        `CALL "${schema}".append($1, NULL, 0, gen_random_uuid(), 1, $2, NULL, NULL, NULL, NULL, NULL)`,
        [log, encodeRecord(decided(turn('sync', n)))],
      );
    const appends = (await flushes()) - before;
    // the control: plain commits in the same session do not wait, so the count can tell
    await admin.query(`CREATE TABLE "${schema}".control (n integer)`);
    const start = await flushes();
    for (let n = 0; n < 30; n++) await admin.query(`INSERT INTO "${schema}".control VALUES ($1)`, [n]);
    const plain = (await flushes()) - start;
    await admin.query(`DROP TABLE "${schema}".control`);
    assert.ok(appends >= 30, `30 appends made ${appends} WAL flushes`);
    assert.ok(plain < 10, `the control's 30 commits made ${plain} WAL flushes`);
  });
});

test.run();
