/**
 * The item keys a batch's projections share (`keysOf`, found once a batch for the three that use
 * them) are those of the records `ProjectionSet.apply` is given now: a caller's array changed in
 * place after an apply, or given again, is applied as it holds then, not as the keys found for it
 * before say.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonlBackend } from '../backends/jsonl.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import { itemsProjection, keysOf } from '../lib/honcho/read-model/items.js';
import { HONCHO_PROJECTIONS } from '../lib/honcho/read-model/state.js';
import { workload } from '../lib/honcho/synthetic.js';
import { encodeRecord, type Record } from '../lib/index.js';
import { ProjectionSet } from '../lib/projections/set.js';
import { decided, sent, skip, turn, withHome } from './support/ledger.js';

test('an array changed in place after an apply is applied as it holds then', async () => {
  await withHome(async (home) => {
    const backend = jsonlBackend(join(home.dir, 'ledger.jsonl'), { codec: honchoCodec });
    const { set, log } = await ProjectionSet.open(backend, {
      index: join(home.dir, 'index'),
      projections: HONCHO_PROJECTIONS,
      onNotice: () => undefined,
    });
    try {
      const a = turn('keys', 1);
      const b = turn('keys', 2);
      const batch: Record[] = [decided(a)];
      await log.append(batch);
      await set.apply(batch, () => log.resumePoint());
      // the same array, now holding other records of the same length
      batch[0] = decided(b, skip());
      await log.append(batch);
      await set.apply(batch, () => log.resumePoint());
      batch[0] = sent(a);
      await log.append(batch);
      await set.apply(batch, () => log.resumePoint());
      assert.equal(await set.queries(itemsProjection).statesOf([a, b]), ['sent', 'skipped']);
    } finally {
      await set.close();
      await log.close();
    }
  });
});

test('an array changed in place after an apply during a build is caught up by the build as it was applied', async () => {
  await withHome(async (home) => {
    const file = join(home.dir, 'ledger.jsonl');
    writeFileSync(file, [...workload({ records: 10_000, seed: 5 })].map((r) => `${encodeRecord(r)}\n`).join(''));
    const backend = jsonlBackend(file, { codec: honchoCodec });
    const { set, log } = await ProjectionSet.open(backend, {
      index: join(home.dir, 'index'),
      projections: HONCHO_PROJECTIONS,
      onNotice: () => undefined,
      backgroundFrom: 1000,
      worker: {
        module: new URL('../lib/target.js', import.meta.url).href,
        export: 'backendFor',
        args: [`jsonl:${file}`],
      },
    });
    try {
      assert.ok(
        set.progress().every((p) => p.state === 'building'),
        JSON.stringify(set.progress()),
      );
      const a = turn('keys', 1);
      const b = turn('keys', 2);
      const batch: Record[] = [decided(a)];
      await log.append(batch);
      await set.apply(batch, () => log.resumePoint());
      batch[0] = decided(b, skip());
      await log.append(batch);
      await set.apply(batch, () => log.resumePoint());
      await set.whenReady();
      assert.equal(await set.queries(itemsProjection).statesOf([a, b]), ['waiting', 'skipped']);
    } finally {
      await set.close();
      await log.close();
    }
  });
});

test('keysOf gives the keys of the records an array holds, however often it is asked', () => {
  const a = turn('keys', 1);
  const b = turn('keys', 2);
  const records: Record[] = [decided(a), sent(b)];
  assert.equal(keysOf(records), keysOf([...records]));
  records[1] = sent(a);
  assert.equal(keysOf(records).all, keysOf([...records]).all);
  assert.equal(keysOf(records).awaited, []);
});

test.run();
