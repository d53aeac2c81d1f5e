/**
 * A copy into PostgreSQL is written in place, so it is marked unfinished until it is whole and
 * checked: a copy killed half-way (SIGKILL of the real CLI) leaves a log that every open refuses
 * with its own error, never one read as a ledger of part of its source; `ledgerstore drop --yes`
 * removes it, and the copy then runs again to a ledger equal to its source. A copy stopped by
 * Ctrl-C says so, and what to run. And `drop` of a PostgreSQL log: what it refuses.
 */
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../../backends/jsonl-write-whole.js';
import { postgresBackend } from '../../backends/postgres/index.js';
import { syntheticLines, workload } from '../../lib/honcho/synthetic.js';
import { honchoCodec, Ledger } from '../../lib/index.js';
import { CLI, ledgerstore } from '../support/cli.js';
import { rejects, withHome } from '../support/ledger.js';
import { freshLog, logUri, pgBackend, pgServer, until, withAdmin } from '../support/pg-cluster.js';

const run = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });

/** The log's row (`head`, `unfinished`), or `null` when there is none, and how many records it has. */
async function rowOf(log: string): Promise<{ head: number; unfinished: string | null; records: number } | null> {
  const { schema } = await pgServer();
  return withAdmin(async (admin) => {
    const there = await admin.query<{ there: boolean }>('SELECT to_regclass($1) IS NOT NULL AS there', [
      `"${schema}".logs`,
    ]);
    if (there.rows[0]?.there !== true) return null; // no writer made the schema yet
    const { rows } = await admin.query<{ head: string; unfinished: string | null }>(
      `SELECT head, unfinished FROM "${schema}".logs WHERE name = $1`,
      [log],
    );
    const {
      rows: [count],
    } = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".records WHERE log = $1`, [log]);
    const row = rows[0];
    return row === undefined ? null : { head: Number(row.head), unfinished: row.unfinished, records: count?.n ?? 0 };
  });
}

/** Enough that the copy, killed once 20,000 are committed, is far from its end (batches of 10,000). */
const RECORDS = 80_000;

test('a copy killed half-way leaves a log every open refuses; drop --yes removes it and the copy runs again', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: RECORDS, seed: 21 }));
    const log = freshLog('k');
    const uri = await logUri(log);
    const copying = spawn(process.execPath, [CLI, 'copy', home.path, uri], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      copying.on('exit', (_code, signal) => resolve(signal)),
    );
    // the first batches committed: the copy is well under way, far from its end
    await until(async () => ((await rowOf(log))?.head ?? 0) >= 20_000, 'the copy to write its first batches');
    copying.kill('SIGKILL');
    assert.is(await exited, 'SIGKILL');
    const left = await rowOf(log);
    assert.ok(left !== null && left.head > 0 && left.head < RECORDS, `part of the source: ${JSON.stringify(left)}`);
    assert.is(left?.unfinished, 'copy', 'marked unfinished');

    const words = new RegExp(
      `an unfinished copy: a ledgerstore copy into this log did not finish .*remove it with ledgerstore drop ${escaped(uri)} --yes, then run the copy again`,
    );
    await rejects(Ledger.open(uri), 'LEDGER_UNFINISHED_COPY', words);
    await rejects(Ledger.open(uri, { readOnly: true }), 'LEDGER_UNFINISHED_COPY', words);
    const backend = postgresBackend(uri, { codec: honchoCodec });
    await rejects(backend.open(), 'LEDGER_UNFINISHED_COPY', words);
    await rejects(backend.open({ readOnly: true }), 'LEDGER_UNFINISHED_COPY', words);
    const index = join(home.dir, 'index');
    mkdirSync(index);
    for (const args of [
      ['counts', uri],
      ['verify', uri],
      ['follow', uri],
      ['counts', uri, '--index', index],
      ['copy', uri, join(home.dir, 'out.jsonl')],
    ]) {
      const refused = run(...args);
      assert.is(refused.status, 1, `${args[0]}: ${refused.stderr}`);
      assert.match(refused.stderr, /unfinished copy/, args[0]);
      assert.match(refused.stderr, /see docs\/runbook\.md#ledger-unfinished-copy/, args[0]);
      assert.is(refused.stdout, '', `${args[0]} writes nothing on stdout`);
    }
    const again = run('copy', home.path, uri);
    assert.is(again.status, 1, again.stderr);
    assert.match(again.stderr, /unfinished copy/);
    assert.equal(await rowOf(log), left, 'the refusals changed nothing');

    const asked = run('drop', uri);
    assert.is(asked.status, 2, asked.stderr);
    assert.is(
      asked.stderr,
      `ledgerstore: drop would remove the PostgreSQL log ${uri} and its ${left?.head.toLocaleString('en-US')} records (an unfinished copy); nothing was removed: add --yes to remove it\n`,
    );
    assert.equal(await rowOf(log), left, 'drop without --yes changes nothing');

    const dropped = run('drop', uri, '--yes');
    assert.is(dropped.status, 0, dropped.stderr);
    assert.match(dropped.stdout, /removed the PostgreSQL log .* records \(an unfinished copy\)\n$/);
    assert.is(await rowOf(log), null, 'no row, no records');
    const { schema } = await pgServer();
    await withAdmin(async (admin) => {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".records WHERE log = $1`, [log]);
      assert.equal(rows, [{ n: 0 }], 'no record of the log is left');
    });

    const copied = run('copy', home.path, uri);
    assert.is(copied.status, 0, copied.stderr);
    assert.equal(await rowOf(log), { head: RECORDS, unfinished: null, records: RECORDS }, 'whole, and finished');
    const verified = run('verify', uri);
    assert.is(verified.status, 0, verified.stderr);
    const exported = run('export', uri);
    assert.is(exported.status, 0, exported.stderr);
    assert.ok(exported.stdout === readFileSync(home.path, 'utf8'), "the copy's export is the source file");
  });
});

test('a copy stopped by Ctrl-C says its log is an unfinished copy and to drop it before copying again', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: 60_000, seed: 22 }));
    const log = freshLog('i');
    const uri = await logUri(log);
    const signals = new EventEmitter();
    const running = ledgerstore(['copy', home.path, uri], { signals });
    await until(async () => ((await rowOf(log))?.head ?? 0) >= 10_000, 'the copy to write its first batch');
    signals.emit('SIGINT', 'SIGINT');
    const stopped = await running;
    assert.is(stopped.code, 130, stopped.stderr);
    const left = await rowOf(log);
    assert.is(left?.unfinished, 'copy');
    assert.match(
      stopped.stderr,
      new RegExp(
        `^ledgerstore: copy stopped by SIGINT; ${escaped(uri)} is left an unfinished copy \\([\\d,]+ records of ${escaped(home.path)}\\), which every open refuses: run ledgerstore drop ${escaped(uri)} --yes, then the copy again\\n$`,
      ),
    );
    assert.is((await ledgerstore(['drop', uri, '--yes'])).code, 0);
    const copied = await ledgerstore(['copy', home.path, uri]);
    assert.is(copied.code, 0, copied.stderr);
    assert.equal(await rowOf(log), { head: 60_000, unfinished: null, records: 60_000 });
  });
});

test('gen into PostgreSQL is marked unfinished while it writes, and finished after', async () => {
  const log = freshLog('g');
  const uri = await logUri(log);
  const made = run('gen', uri, '--records', '500');
  assert.is(made.status, 0, made.stderr);
  assert.equal(await rowOf(log), { head: 500, unfinished: null, records: 500 });
  const counts = run('counts', uri);
  assert.is(counts.status, 0, counts.stderr);
});

test('drop of a PostgreSQL log: refused while a writer has it open, and for a log that is not there', async () => {
  const log = freshLog('d');
  const uri = await logUri(log);
  const missing = run('drop', uri, '--yes');
  assert.is(missing.status, 1, missing.stderr);
  assert.is(missing.stderr, `ledgerstore: ${uri}: no such log; there is no ledger to drop\n`);

  const writer = await (await pgBackend(log)).open();
  await writer.append([...workload({ records: 3, seed: 1 })]);
  const held = run('drop', uri, '--yes');
  assert.is(held.status, 1, held.stderr);
  assert.match(held.stderr, /open for writing elsewhere/);
  assert.equal(await rowOf(log), { head: 3, unfinished: null, records: 3 }, 'nothing removed under a writer');
  await writer.close();

  const asked = run('drop', uri);
  assert.is(asked.status, 2);
  const dropped = run('drop', uri, '--yes');
  assert.is(dropped.status, 0, dropped.stderr);
  assert.is(dropped.stdout, `${uri}: removed the PostgreSQL log ${uri} and its 3 records\n`);
  assert.is(await rowOf(log), null);
});

test('a follower of an empty log refuses it once a copy begins to fill it', async () => {
  const log = freshLog('f');
  const uri = await logUri(log);
  const reader = await postgresBackend(uri, { codec: honchoCodec }).open({ readOnly: true });
  const fill = await postgresBackend(uri, { codec: honchoCodec }).fill('copy');
  await rejects(reader.refresh(), 'LEDGER_UNFINISHED_COPY', /unfinished copy/);
  await reader.close().catch(() => undefined);
  await fill.finish();
  const after = await postgresBackend(uri, { codec: honchoCodec }).open({ readOnly: true });
  assert.is(after.head, 0, 'finished: an empty ledger, read as one');
  await after.close();
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

test.run();
