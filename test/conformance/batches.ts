/**
 * Whole batches, and durable before believed (`lib/log.ts`): the records of one `append` are
 * acknowledged whole or not at all; a refused or failed one leaves nothing that a read takes for
 * a record; and what a failed batch leaves after a reopen is all of it or nothing with
 * `atomicBatches`, else a prefix of it, each record whole.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import type { Record } from '../../lib/index.js';
import { all, type Common, code, type Run, type Subject } from './common.js';
import { decided, edit, INVALID, RECORDS, skip } from './records.js';

export function batchTests<S extends Subject>({ test, withSubject }: Run<S>): void {
  test(
    'a refused batch writes nothing',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(RECORDS.slice(0, 3));
      assert.equal(await code(log.append([RECORDS[3] as Record, INVALID])), 'LEDGER_INVALID_RECORD');
      assert.equal(log.head, 3);
      assert.deepEqual(await all(log), RECORDS.slice(0, 3));
      await log.close();
    }),
  );

  test(
    'a large batch is one append',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      const many = Array.from({ length: 20_000 }, (_, n) =>
        decided(edit(`e${n >> 4}`, n & 15), skip('x'.repeat(n % 50))),
      );
      assert.deepEqual(await log.append(many), { from: 0, head: 20_000 });
      assert.deepEqual(await all(log, 19_990), many.slice(19_990));
      await log.close();
    }),
  );
}

/** What a batch whose write failed leaves: registered where the run can make a write fail ({@link Common.stop}). */
export function failedBatchTests<S extends Subject>({ test, withSubject, stop, capabilities }: Common<S>): void {
  if (stop === undefined) return;
  const batch = RECORDS.slice(1, 6);
  const leaves = capabilities.atomicBatches
    ? 'all of it or nothing (atomicBatches)'
    : 'a prefix of it, each record whole';
  test(
    `a batch whose write failed is not believed, and a reopen finds ${leaves}`,
    withSubject(async (subject) => {
      const log = await subject.backend.open();
      await log.append(RECORDS.slice(0, 1));
      stop(subject);
      assert.notEqual(await code(log.append(batch)), 'ok', 'the append meant to fail resolved');
      assert.equal(log.head, 1, 'the head did not move');
      await log.close();
      const again = await subject.backend.open();
      const found = await all(again);
      await again.close();
      assert.deepEqual(found[0], RECORDS[0]);
      const kept = found.slice(1);
      assert.deepEqual(
        kept,
        batch.slice(0, kept.length),
        'what is left of the batch is its first records, whole, in order',
      );
      if (capabilities.atomicBatches)
        assert.ok(
          kept.length === 0 || kept.length === batch.length,
          `${kept.length} of the batch's ${batch.length} records`,
        );
    }),
  );
}
