/**
 * The CLI's read-only commands on a PostgreSQL log that is not there (a typo in `log=` or
 * `schema=`), in real processes against the run's server: exit 1 with one line that says why,
 * no password in it, and neither the log nor the schema made by the look. An empty log that is
 * there reads as empty (exit 0). `follow` waits for a log no writer has made yet, and says so.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ledger } from '../../lib/index.js';
import { printableTarget } from '../../lib/printable.js';
import { CLI, cli, lineOf } from '../support/cli.js';
import { decided, turn } from '../support/ledger.js';
import { LineProcess } from '../support/line-process.js';
import { freshLog, logUri, pgServer, withAdmin } from '../support/pg-cluster.js';

const EMPTY = '{"decided":0,"sent":0,"waiting":0,"failed":0,"skipped":0}\n';
/** A password in the URI: the server of the run takes the user without one, and no output may show it. */
const SECRET = 'hunter2-secret';

/** Whether the run's schema (or `schema`) has a row for `log`, and whether `schema` is there at all. */
async function inDatabase(log: string, schema?: string): Promise<{ schema: boolean; row: boolean }> {
  const name = schema ?? (await pgServer()).schema;
  return withAdmin(async (admin) => {
    const there = await admin.query<{ there: boolean }>('SELECT to_regnamespace($1) IS NOT NULL AS there', [name]);
    if (there.rows[0]?.there !== true) return { schema: false, row: false };
    const table = await admin.query<{ there: boolean }>('SELECT to_regclass($1) IS NOT NULL AS there', [
      `"${name}".logs`,
    ]);
    if (table.rows[0]?.there !== true) return { schema: true, row: false };
    const rows = await admin.query(`SELECT 1 FROM "${name}".logs WHERE name = $1`, [log]);
    return { schema: true, row: rows.rows.length > 0 };
  });
}

/** A log of the run's schema that is there, and holds no record: made by a writable open. */
async function emptyLog(): Promise<string> {
  const uri = await logUri(freshLog());
  const ledger = await Ledger.open(uri);
  await ledger.close();
  return uri;
}

/** The read-only commands, on `uri`. */
const READ_ONLY = (uri: string): [readonly string[], string][] => [
  [['counts', uri], 'read'],
  [['outbox', uri, '--json'], 'read'],
  [['sent-ids', uri, '{"type":"turn","session":"a","turn":1}'], 'read'],
  [['conclusion', uri, 'trusted', 'x'], 'read'],
  [['export', uri], 'read'],
  [['verify', uri], 'verify'],
  [['check', '--ledger', uri], 'check against'],
  [['index', 'status', uri, '--index', '/nonexistent/idx'], 'compare the index with'],
];

test('every read-only command on a log with no row exits 1 with one line, and makes no row', async () => {
  await emptyLog(); // the schema is there: only the log is not
  const log = freshLog('typo');
  const uri = await logUri(log, { password: SECRET });
  const name = printableTarget(uri);
  assert.not.ok(name.includes(SECRET));
  const { schema } = await pgServer();
  for (const [args, verb] of READ_ONLY(uri)) {
    const run = cli(args);
    assert.is(run.code, 1, `${args[0]}: ${run.stderr}`);
    assert.is(
      run.stderr.replace(/\n$/, ''),
      `ledgerstore: ${name}: no log ${log} in the schema ${schema}; there is no ledger to ${verb}`,
      args.join(' '),
    );
    assert.ok(!run.stdout.includes(SECRET) && !run.stderr.includes(SECRET), 'no password in any output');
  }
  assert.equal(await inDatabase(log), { schema: true, row: false }, 'the look made no row');
});

test('a schema that is not there: exit 1, and the look does not make it', async () => {
  const schema = `nosuch_${process.pid}`;
  const uri = await logUri('honcho', { schema });
  const run = cli(['counts', uri]);
  assert.is(run.code, 1, run.stderr);
  assert.is(run.stdout, '');
  assert.is(
    run.stderr,
    `ledgerstore: ${printableTarget(uri)}: no ledgerstore schema ${schema} in the database; there is no ledger to read\n`,
  );
  assert.equal(await inDatabase('honcho', schema), { schema: false, row: false });
});

test('a log that is there and holds no record reads as empty: exit 0', async () => {
  const uri = await emptyLog();
  const run = cli(['counts', uri, '--json']);
  assert.equal(run, { code: 0, stdout: EMPTY, stderr: '' });
  assert.is(cli(['verify', uri]).code, 0);
});

test('follow of a log no writer has made yet waits for it, says so on stderr, and prints its records once made', async () => {
  const log = freshLog('later');
  const uri = await logUri(log);
  const follow = new LineProcess([CLI, 'follow', uri, '--from', '0'], 'follower');
  try {
    const { schema } = await pgServer();
    await follow.waitFor(
      () =>
        follow.stderr ===
        `ledgerstore: following ${printableTarget(uri)} from record 0: no log ${log} in the schema ${schema} yet; waiting for it to be made (Ctrl-C stops)\n`,
      'the follower to say it waits',
    );
    const appended = cli(['append', uri], lineOf(decided(turn('later', 1))));
    assert.is(appended.code, 0, appended.stderr);
    await follow.waitFor((lines) => lines.length === 1, 'the record');
  } finally {
    follow.process.kill('SIGINT');
    await follow.exited;
  }
  assert.equal(follow.lines, ['0  decided turn 1 of session later -> turn to trusted as kyle']);
  assert.is(follow.ended?.code, 130, follow.stderr);
});

test.run();
