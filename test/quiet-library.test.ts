/**
 * The library prints nothing: what an operator should know (a read model built from the log)
 * goes to the caller's `onNotice`, and nowhere when there is none. A child process opens a
 * ledger with a new read model both ways, so that every byte it writes is seen.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../lib/honcho/synthetic.js';
import { encodeRecord } from '../lib/index.js';

const INDEX = new URL('../lib/index.js', import.meta.url).href;

/** Opens `ledger` with a fresh read model in `index` and closes it; `withNotices` prints each notice on stdout. */
function openInChild(ledger: string, index: string, withNotices: boolean): { stdout: string; stderr: string } {
  const options = withNotices
    ? '{ index: process.argv[2], onNotice: (m) => process.stdout.write("notice: " + m + "\\n") }'
    : '{ index: process.argv[2] }';
  const script = `const { Ledger } = await import(${JSON.stringify(INDEX)});
const ledger = await Ledger.open(process.argv[1], ${options});
await ledger.counts();
await ledger.close();`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, ledger, index], {
    encoding: 'utf8',
  });
  assert.is(child.status, 0, child.stderr);
  return { stdout: child.stdout, stderr: child.stderr };
}

test('a read model built at open is told to onNotice, and printed nowhere without it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-quiet-'));
  try {
    const ledger = join(dir, 'honcho.jsonl');
    writeFileSync(ledger, [...workload({ records: 2_000, seed: 3 })].map((r) => `${encodeRecord(r)}\n`).join(''));
    const told = openInChild(ledger, join(dir, 'told'), true);
    assert.match(told.stdout, /^notice: /m, 'the open has a notice to give');
    assert.is(told.stderr, '');
    const quiet = openInChild(ledger, join(dir, 'quiet'), false);
    assert.is(quiet.stdout, '');
    assert.is(quiet.stderr, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
