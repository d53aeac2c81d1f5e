/**
 * The read model (a LevelDB index, `--index`) over a PostgreSQL log that other writers append
 * to: what the ledger takes in by its catch-up goes into the read model and its checkpoint, so
 * a reopen reads only what was appended since, whoever appended it.
 */
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import { Ledger, type Record } from '../../lib/index.js';
import { countingReplays } from '../support/counting-backend.js';
import { withHome } from '../support/ledger.js';
import { freshLog, logUri, pgBackend } from '../support/pg-cluster.js';

/** What a ledger answers, to hold against a replay of the log without a read model. */
async function answersOf(ledger: Ledger): Promise<unknown> {
  return { size: ledger.size, counts: await ledger.counts(), outbox: await ledger.outbox() };
}

async function replayedAnswers(uri: string): Promise<unknown> {
  const ledger = await Ledger.open(uri, { readOnly: true });
  try {
    return await answersOf(ledger);
  } finally {
    await ledger.close();
  }
}

const generated = [...workload({ records: 2000, seed: 31 })];
const appendAll = (ledger: Ledger, records: readonly Record[]): Promise<void[]> =>
  Promise.all(records.map((record) => ledger.append(record)));

test('a read model over a PostgreSQL log takes in what others append as it catches up; a reopen reads only what came since its checkpoint', async () => {
  await withHome(async (home) => {
    const log = freshLog();
    const uri = await logUri(log);
    const index = join(home.dir, 'index');
    const { backend, replays } = countingReplays(await pgBackend(log));
    const notices: string[] = [];
    const indexed = await Ledger.open(backend, { index, onNotice: (m) => notices.push(m) });
    const other = await Ledger.open(uri);
    try {
      await appendAll(other, generated.slice(0, 1000));
      await indexed.catchUp();
      assert.equal(await answersOf(indexed), await replayedAnswers(uri), 'caught up with the other writer');
      // its own appends after the other's, then the other's again (which build on them)
      await appendAll(indexed, generated.slice(1000, 1500));
      await other.catchUp();
      await appendAll(other, generated.slice(1500, 1800));
      await indexed.catchUp();
      assert.equal(await answersOf(indexed), await replayedAnswers(uri));
    } finally {
      await indexed.close();
    }
    assert.equal(replays, [], 'the first open, of an empty log, replayed nothing');
    // the read model's checkpoint is at 1800: what the others append after it is all a reopen reads
    await appendAll(other, generated.slice(1800));
    await other.close();
    const reopened = await Ledger.open(backend, { index, onNotice: (m) => notices.push(m) });
    try {
      assert.equal(
        replays,
        Array.from({ length: 200 }, (_, n) => 1800 + n),
        'exactly the 200 records appended since the checkpoint',
      );
      assert.equal(await answersOf(reopened), await replayedAnswers(uri));
    } finally {
      await reopened.close();
    }
    assert.equal(notices, [], 'the read model was never rebuilt');
  });
});

test.run();
