/**
 * Fuzzing the line format with fast-check (issue 5): valid records round-trip, the forms serde
 * accepts read as the same record, the fast path never disagrees with the serde path, and no
 * input crashes or hangs the decoder. The properties are in `test/support/codec-properties.ts`;
 * each runs in a worker under a watchdog (`fuzz-runner.ts`), a few thousand runs at
 * `LEDGERSTORE_TORTURE=1`, with a fixed seed that a failure prints.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkInWorker, describeRun, type PropertyReport } from '../support/fuzz-runner.js';

const PROPERTIES = new URL('../support/codec-properties.js', import.meta.url);

async function check(name: string, runs: number, title: string): Promise<PropertyReport> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-fuzz-'));
  try {
    const r = await checkInWorker(PROPERTIES, name, runs, dir);
    assert.not.ok(r.failed, `${title}:\n${r.message}`);
    console.log(describeRun(`codec ${title}`, r));
    return r;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('every valid record is written as JSON.stringify writes it and reads back as itself, fast path and serde path alike', async () => {
  const r = await check('roundTrip', 3000, 'round trip');
  for (const type of ['decided', 'sent', 'failed'])
    assert.ok((r.stats[type] ?? 0) > 0, `some ${type} records were made`);
});

test('a record written in any form serde reads (keys in any order, whitespace, escapes) reads as itself and is written back canonically', async () => {
  await check('otherForms', 2000, 'other forms');
});

test('on damaged lines the fast path gives up or reads what the serde path reads, never more', async () => {
  const r = await check('fastPathAgrees', 4000, 'fast path agrees');
  assert.ok(
    (r.stats['both read it'] ?? 0) > 0 && (r.stats['gave up, serde refused'] ?? 0) > 0,
    'both outcomes were met',
  );
});

test('arbitrary bytes never crash or hang the decoder: a record that round-trips, or a DecodeError that says why', async () => {
  const r = await check('neverCrashes', 5000, 'never crashes');
  const read = Object.entries(r.stats)
    .filter(([what]) => what.endsWith(': read'))
    .reduce((sum, [, n]) => sum + n, 0);
  assert.ok(read > 0, 'some inputs decoded');
});

test.run();
