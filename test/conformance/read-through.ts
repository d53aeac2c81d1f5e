/**
 * Reading through (`lib/log.ts`): `open` reads every record in order and hands each to `replay`;
 * a record `replay` refuses stops the open with a `DamagedError` at its position, and the log is
 * left as it was; a log reads back what was appended, from any position.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { DamagedError, encodeRecord, Ledger, type Record } from '../../lib/index.js';
import { all, type Run, type Subject } from './common.js';
import { decided, RECORDS, turn, vectorBytes, vectorRecords } from './records.js';

export function readThroughTests<S extends Subject>({ test, withSubject }: Run<S>): void {
  test(
    'an empty log has head 0 and reads nothing',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.equal(log.head, 0);
      assert.equal(log.repaired, null);
      assert.deepEqual(await all(log), []);
      await log.close();
    }),
  );

  test(
    'appends are read back in order, and after a reopen each is replayed with its position',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.deepEqual(await log.append(RECORDS.slice(0, 5)), { from: 0, head: 5 });
      assert.deepEqual(await log.append(RECORDS.slice(5)), { from: 5, head: 20 });
      assert.deepEqual(await all(log), RECORDS);
      await log.close();
      const seen: [Record, number][] = [];
      const again = await backend.open({
        replay: (record, position) => {
          seen.push([record, position]);
        },
      });
      assert.equal(again.head, 20);
      assert.deepEqual(
        seen,
        RECORDS.map((r, n) => [r, n]),
      );
      assert.deepEqual(await all(again), RECORDS);
      await again.close();
    }),
  );

  test(
    'a record that replay refuses is damage at its position, counted from 1; the log is left as it was, and holds nothing',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      // the bare log keeps no rules: a second `decided` for one item goes in
      await log.append([decided(turn('chat-1', 1)), decided(turn('chat-1', 2)), decided(turn('chat-1', 1))]);
      await log.close();
      const refused = await Ledger.open(backend).then(
        () => assert.fail('opened'),
        (e: unknown) => e,
      );
      assert.ok(refused instanceof DamagedError, String(refused));
      assert.equal(refused.line, 3);
      assert.ok(
        refused.message.startsWith(`${backend.name}:3: turn 1 of session chat-1: decided already; `),
        refused.message,
      );
      const again = await backend.open(); // the failed open took no lock
      assert.equal(again.head, 3);
      await again.close();
    }),
  );

  test(
    'an error from replay that is not a refusal stops the open as it is',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(RECORDS.slice(0, 2));
      await log.close();
      const boom = new Error('boom');
      await assert.rejects(
        backend.open({
          replay: () => {
            throw boom;
          },
        }),
        (e: unknown) => e === boom,
      );
      const again = await backend.open();
      assert.equal(again.head, 2);
      await again.close();
    }),
  );

  test(
    'reading from a position gives the records from there',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(RECORDS);
      for (const from of [0, 1, 7, 19, 20, 25])
        assert.deepEqual(await all(log, from), RECORDS.slice(from), `from ${from}`);
      await log.close();
    }),
  );

  test(
    'Unicode and every escape class of the canonical vectors round-trip',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(vectorRecords());
      await log.close();
      const again = await backend.open({ readOnly: true });
      const lines = (await all(again)).map((record) => `${encodeRecord(record)}\n`).join('');
      assert.equal(lines, vectorBytes().toString('utf8'));
      await again.close();
    }),
  );
}
