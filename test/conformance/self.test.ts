/**
 * The suite tested (as abstract-level's `test/self.js` does): run on a minimal log of its own
 * (`test/support/minimal-log.ts`) it passes whole; with a flaw put in the log, exactly the tests
 * of the promise the flaw breaks fail.
 */
import { suite as uvuSuite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Flaw, minimalBackend } from '../support/minimal-log.js';
import { suite } from './index.js';

/** Registers the suite on a minimal log (with `flaw`) in a plain list, runs every test, and gives the names of those that failed. */
async function failures(flaw?: Flaw): Promise<{ ran: number; failed: string[] }> {
  const tests: [string, () => Promise<void>][] = [];
  suite({
    test: (name, body) => tests.push([name, body]),
    name: 'minimal',
    factory: () => {
      const backend = minimalBackend(flaw);
      return { backend, cleanup: () => {} };
    },
    stop: ({ backend }) => {
      (backend as ReturnType<typeof minimalBackend>).store.failNextWrite = true;
    },
  });
  const failed: string[] = [];
  for (const [name, body] of tests) {
    try {
      await body();
    } catch {
      failed.push(name.replace(/^minimal: /, ''));
    }
  }
  return { ran: tests.length, failed };
}

const self = uvuSuite('conformance: the suite itself');

self('a minimal log on LogBase passes every test of the suite', async () => {
  const { ran, failed } = await failures();
  assert.equal(failed, []);
  assert.ok(ran >= 25, `${ran} tests`);
});

const CAUGHT: readonly [Flaw, string[]][] = [
  ['two writers', ['a second writer is refused while the first holds the log, and opens once it is closed']],
  [
    'reads from the start',
    [
      'reading from a position gives the records from there',
      'a large batch is one append',
      'an open resumed at a point replays only the records after it, and reads all',
      'reading from one position up to another gives the records between them',
      // the ledger reads a sent item's ids back from the log at the position of its `sent`
      'a turn only a bigint holds is kept exactly: appended, replayed, in every answer and in the log',
      'the ledger answers every query as a replay in memory does, for a workload of thousands of records',
    ],
  ],
  [
    'resume point when closed',
    [
      'resumePoint on a closed writable log fails with LEDGER_CLOSED',
      'resumePoint on a closed read-only log fails with LEDGER_CLOSED',
    ],
  ],
  [
    'head before records',
    [
      'the guards refuse in one order: closed, read-only, the records, the expected head, then an empty batch resolves',
      'the guards on a stopped log: an invalid record, a wrong head, an empty batch are LEDGER_STOPPED; closed comes first',
    ],
  ],
];

for (const [flaw, caught] of CAUGHT) {
  self(`a minimal log whose flaw is "${flaw}" fails exactly the tests of that promise`, async () => {
    assert.equal((await failures(flaw)).failed, caught);
  });
}

self.run();
