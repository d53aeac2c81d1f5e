/**
 * A JSONL file written whole (backends/jsonl-write-whole.ts): to a new file only, mode 0600,
 * with progress, and nothing left beside it, whether it succeeds or fails.
 */
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../backends/jsonl-write-whole.js';
import { syntheticLines } from '../lib/honcho/synthetic.js';
import { honchoCodec, isLedgerError, jsonlBackend, LedgerIoError } from '../lib/index.js';
import { failure, withHome } from './support/ledger.js';

test('an existing file is refused and left as it was', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, 'not a ledger\n', { mode: 0o644 });
    const caught = await failure(writeJsonlWhole(home.path, syntheticLines({ records: 100 })));
    assert.instance(caught, LedgerIoError);
    assert.is((caught as LedgerIoError).errno, 'EEXIST');
    assert.ok((caught as LedgerIoError).message.startsWith(`${home.path}: `), (caught as LedgerIoError).message);
    assert.is(readFileSync(home.path, 'utf8'), 'not a ledger\n');
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('the file has mode 0600, its lines each with a newline; progress is told; no temporary file is left', async () => {
  await withHome(async (home) => {
    const progress: number[] = [];
    const written = await writeJsonlWhole(home.path, syntheticLines({ records: 250_000, seed: 2 }), {
      onProgress: (n) => progress.push(n),
    });
    assert.equal(written, { records: 250_000, bytes: statSync(home.path).size });
    assert.is(statSync(home.path).mode & 0o777, 0o600);
    assert.equal(progress, [100_000, 200_000, 250_000]);
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
    assert.is(readFileSync(home.path, 'utf8'), `${[...syntheticLines({ records: 250_000, seed: 2 })].join('\n')}\n`);
  });
});

test('a missing directory fails cleanly, naming the file', async () => {
  await withHome(async (home) => {
    const file = join(home.dir, 'missing', 'honcho.jsonl');
    const caught = await failure(writeJsonlWhole(file, ['{}']));
    assert.instance(caught, LedgerIoError);
    assert.is((caught as LedgerIoError).errno, 'ENOENT');
    assert.is((caught as LedgerIoError).path, file);
    assert.equal(readdirSync(home.dir), []);
  });
});

test('an aborted write fails with the reason and removes its temporary file', async () => {
  await withHome(async (home) => {
    const stop = new AbortController();
    const reason = new Error('stop');
    let given = 0;
    function* lines(): Generator<string> {
      for (;;) {
        if (++given === 50_000) stop.abort(reason);
        yield '{"type":"x"}';
      }
    }
    assert.is(await failure(writeJsonlWhole(home.path, lines(), { signal: stop.signal })), reason);
    assert.equal(readdirSync(home.dir), []);
  });
});

test('an empty file is replaced whole, keeping its mode; refused while a writer holds it', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, '');
    chmodSync(home.path, 0o640);
    const held = await jsonlBackend(home.path, { codec: honchoCodec }).open();
    try {
      const refused = await failure(writeJsonlWhole(home.path, ['{"a":1}']));
      assert.ok(isLedgerError(refused, 'LEDGER_LOCKED'), String(refused));
      assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
    } finally {
      await held.close();
    }
    await writeJsonlWhole(home.path, ['{"a":1}', '{"b":2}']);
    assert.is(readFileSync(home.path, 'utf8'), '{"a":1}\n{"b":2}\n');
    assert.is(statSync(home.path).mode & 0o777, 0o640);
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test.run();
