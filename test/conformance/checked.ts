/**
 * Checked records (`lib/log.ts`, `CheckedRecord`): a record its codec checked is taken by a log
 * of that codec as it is, and stored as the same record the plain one would be; anything else
 * (a record checked by another codec, a value shaped like a checked one) is checked by the log,
 * as every record is.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { CheckedRecord, honchoCodec, type Record, type RecordCodec } from '../../lib/index.js';
import { all, code, type Run, type Subject } from './common.js';
import { decided, edit, INVALID, RECORDS, skip, vectorRecords } from './records.js';

export function checkedTests<S extends Subject>({ test, withSubject }: Run<S>): void {
  test(
    "records their codec checked are stored as the same records as plain ones, serde_json's vectors among them",
    withSubject(async ({ backend }) => {
      const records = vectorRecords();
      const log = await backend.open();
      // every other record checked, and a batch of each kind: the two forms mix in one batch
      const mixed = records.map((record, n) => (n % 2 === 0 ? CheckedRecord.check(honchoCodec, record) : record));
      await log.append(mixed.slice(0, 200));
      await log.append(records.slice(200, 300).map((record) => CheckedRecord.check(honchoCodec, record)));
      await log.append(records.slice(300));
      // the last line not ASCII: a resume point's fingerprint is of what the store holds
      const last = decided(edit('édition', 1), skip('é, ü, 😀 and "quotes"'));
      await log.append([CheckedRecord.check(honchoCodec, last)]);
      const point = await log.resumePoint();
      assert.equal(log.head, records.length + 1);
      assert.deepEqual(await all(log), [...records, last]);
      await log.close();
      const again = await backend.open({ readOnly: true, resume: point });
      assert.deepEqual(await all(again), [...records, last]);
      await again.close();
    }),
  );

  test(
    'a record checked by another codec, or a value shaped like a checked one, is checked by the log and refused when invalid',
    withSubject(async ({ backend }) => {
      const lax: RecordCodec<Record> = { ...honchoCodec, normalize: (value) => value as Record };
      const log = await backend.open();
      await log.append(RECORDS.slice(0, 1));
      const forged = [
        CheckedRecord.check(lax, INVALID),
        { record: INVALID, line: JSON.stringify(INVALID) },
        Object.assign(Object.create(CheckedRecord.prototype) as object, { record: INVALID }),
      ] as unknown as CheckedRecord<Record>[];
      for (const record of forged) {
        assert.equal(
          await code(log.append([CheckedRecord.check(honchoCodec, RECORDS[1]), record])),
          'LEDGER_INVALID_RECORD',
        );
      }
      // one checked by another codec is taken once this log's codec has checked it
      await log.append([CheckedRecord.check(lax, RECORDS[1])]);
      assert.deepEqual(await all(log), RECORDS.slice(0, 2));
      await log.close();
    }),
  );
}
