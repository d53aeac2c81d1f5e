/**
 * Moving a ledger to PostgreSQL and back through the library (`copyLedger`), byte for byte: the
 * canonical lines are stored as `text`, so a copy exports the very file it came from, the
 * shared vectors included (`\u0000`, which jsonb refuses, noncharacters, every escape). And one
 * run of the CLI on a `postgres://` target.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../../backends/jsonl-write-whole.js';
import { copyLedger } from '../../lib/copy.js';
import { syntheticLines } from '../../lib/honcho/synthetic.js';
import { backendFor, decodeRecord, encodeRecord, Ledger, type Record } from '../../lib/index.js';
import { vectorBytes } from '../conformance/records.js';
import { withHome } from '../support/ledger.js';
import { freshLog, linesOf, logUri, pgBackend } from '../support/pg-cluster.js';

const CLI = fileURLToPath(new URL('../../lib/cli.js', import.meta.url));

test('a 30k-record ledger copies from JSONL to PostgreSQL and back byte for byte, and its export is the file', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: 30_000, seed: 8 }));
    const original = readFileSync(home.path);
    const log = freshLog();
    const uri = await logUri(log);
    const copied = await copyLedger(backendFor(home.path), backendFor(uri));
    assert.is(copied.records, 30_000);
    assert.equal(
      Buffer.from((await linesOf(log)).map((line) => `${line}\n`).join('')),
      original,
      'the database holds the file, line for line',
    );
    const ledger = await Ledger.open(uri, { readOnly: true });
    const exported: string[] = [];
    for await (const record of ledger.records()) exported.push(`${encodeRecord(record)}\n`);
    await ledger.close();
    assert.equal(Buffer.from(exported.join('')), original, "the PostgreSQL ledger's export is the source file");
    const back = join(home.dir, 'back.jsonl');
    await copyLedger(backendFor(uri), backendFor(back));
    assert.equal(readFileSync(back), original, 'copied back to JSONL, byte for byte');
  });
});

test('the shared vectors are stored as their canonical lines, exactly: the database holds the file', async () => {
  // (they break the ledger's rules, so they go in through the log, not a copy)
  const bytes = vectorBytes();
  const vectors: Record[] = [];
  for (let start = 0; start < bytes.length; start = bytes.indexOf(10, start) + 1)
    vectors.push(decodeRecord(bytes, start, bytes.indexOf(10, start)));
  const log = freshLog();
  const writer = await (await pgBackend(log)).open();
  await writer.append(vectors);
  await writer.close();
  assert.equal(
    (await linesOf(log)).map((line) => `${line}\n`).join(''),
    bytes.toString('utf8'),
    "the database's text is the file's lines",
  );
});

test('the CLI takes a postgres:// ledger: counts', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: 2000, seed: 9 }));
    const uri = await logUri(freshLog());
    await copyLedger(backendFor(home.path), backendFor(uri));
    const fromFile = spawnSync(process.execPath, [CLI, 'counts', home.path, '--json'], { encoding: 'utf8' });
    const fromDb = spawnSync(process.execPath, [CLI, 'counts', uri, '--json'], { encoding: 'utf8' });
    assert.is(fromDb.status, 0, fromDb.stderr);
    assert.is(fromDb.stdout, fromFile.stdout);
  });
});

test('the CLI copy to a PostgreSQL log that holds records refuses it and says nothing was appended', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: 50, seed: 9 }));
    const log = freshLog();
    const uri = await logUri(log);
    await copyLedger(backendFor(home.path), backendFor(uri));
    const again = spawnSync(process.execPath, [CLI, 'copy', home.path, uri], { encoding: 'utf8' });
    assert.is(again.status, 1, again.stderr);
    assert.match(again.stderr, /holds 50 records already/);
    assert.ok(again.stderr.endsWith(`ledgerstore: copy stopped; nothing was appended to ${uri}\n`), again.stderr);
    assert.is((await linesOf(log)).length, 50, 'the log is as it was');
  });
});

test.run();
