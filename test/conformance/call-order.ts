/**
 * Call order (`lib/log.ts`): appends are applied in the order they were called, each after every
 * earlier one; `expectedHead` makes that check explicit, refusing an append that expected
 * another head, which writes nothing.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { all, code, type Run, type Subject } from './common.js';
import { RECORDS } from './records.js';

export function callOrderTests<S extends Subject>({ test, withSubject }: Run<S>): void {
  test(
    'concurrent appends are applied in call order',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      const results = await Promise.all(RECORDS.map((record) => log.append([record])));
      assert.deepEqual(
        results.map((r) => r.from),
        RECORDS.map((_, n) => n),
      );
      assert.deepEqual(await all(log), RECORDS);
      await log.close();
    }),
  );

  test(
    'an append that expects another head is a conflict and writes nothing',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(RECORDS.slice(0, 2), { expectedHead: 0 });
      assert.equal(await code(log.append(RECORDS.slice(2, 3), { expectedHead: 1 })), 'LEDGER_CONFLICT');
      assert.equal(await code(log.append(RECORDS.slice(2, 3), { expectedHead: 3 })), 'LEDGER_CONFLICT');
      assert.equal(log.head, 2);
      assert.deepEqual(await log.append(RECORDS.slice(2, 3), { expectedHead: 2 }), { from: 2, head: 3 });
      await log.close();
    }),
  );
}
