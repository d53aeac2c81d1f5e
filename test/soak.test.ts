/**
 * The soak (issue 14), short: memoryd's three consumers (`test/support/soak.ts`: the turn walk,
 * the mirror of journalled edits, the worker sending the outbox to a fake Honcho that refuses
 * some sends) on a ledger of synthetic records, in real processes killed at random moments and
 * restarted, while, from the third run on, a projection's version bump rebuilds it in the
 * background. `LEDGERSTORE_TORTURE` runs more kills; `bench/rebuild.ts --soak` runs it on 10M records.
 *
 * Checked: each run compares every answer with a replay in memory at the same position (a
 * mismatch fails it); an undo is sent with an id Honcho gave for that fact; no item is decided
 * twice; Honcho never receives an item again once its outcome was acknowledged; the outbox drains.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../lib/honcho/synthetic.js';
import { encodeRecord, Ledger } from '../lib/index.js';
import { Random } from '../lib/random.js';
import { withHome } from './support/ledger.js';
import { scaled } from './support/scale.js';
import { CRASH_SEED } from './support/seed.js';
import { type SoakRun, soak } from './support/soak.js';
import { turnsPerSession } from './support/turns-projection.js';

test('memoryd consumes while the read model is built and rebuilt, killed and restarted: every answer a replay gives', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    writeFileSync(
      home.path,
      [...workload({ records: 20_000, seed: CRASH_SEED })].map((r) => `${encodeRecord(r)}\n`).join(''),
    );
    // the read model built first, as memoryd's would be: the kills then cut the rebuild of the
    // turns projection's version 2 (from the third run on), not the first build
    await (await Ledger.open(home.path, { index, projections: [turnsPerSession], waitForIndex: true })).close();
    const rng = new Random(CRASH_SEED * 7 + 14);
    const kills = scaled(5);
    const runs: SoakRun[] = Array.from({ length: kills + 1 }, (_, n) => ({
      version: n < 2 ? 1 : 2,
      killAfter: n < kills ? 300 + rng.below(2500) : null,
    }));
    const report = await soak({
      path: home.path,
      index,
      journal: join(home.dir, 'honcho-journal'),
      runs,
      killClock: 'spawn',
      checks: 'every round',
      page: 10,
    });
    assert.equal(report.failures, [], `LEDGERSTORE_CRASH_SEED=${CRASH_SEED}`);
    assert.ok(report.comparisons > 0, 'the runs compared their answers with a replay');
    assert.ok(report.checks.length >= 5, 'every check of what the runs left was made');
  });
});

test.run();
