/**
 * The guards of an append, in one order (`lib/log-base.ts`): closed, read-only, stopped, the
 * records (`codec.normalize`), the expected head, and only then does an empty batch resolve.
 * Each append below breaks every guard after the one it is refused by.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { type Common, code, type Subject } from './common.js';
import { INVALID, RECORDS } from './records.js';

export function guardTests<S extends Subject>({ test, withSubject, stop }: Common<S>): void {
  test(
    'the guards refuse in one order: closed, read-only, the records, the expected head, then an empty batch resolves',
    withSubject(async ({ backend }) => {
      const writer = await backend.open();
      await writer.append(RECORDS.slice(0, 1));
      assert.equal(await code(writer.append([INVALID], { expectedHead: 7 })), 'LEDGER_INVALID_RECORD');
      assert.equal(await code(writer.append([], { expectedHead: 7 })), 'LEDGER_CONFLICT');
      assert.deepEqual(await writer.append([], { expectedHead: 1 }), { from: 1, head: 1 });
      await writer.close();
      const reader = await backend.open({ readOnly: true });
      assert.equal(await code(reader.append([INVALID], { expectedHead: 7 })), 'LEDGER_READ_ONLY');
      assert.equal(await code(reader.append([])), 'LEDGER_READ_ONLY');
      await reader.close();
      assert.equal(await code(reader.append([INVALID], { expectedHead: 7 })), 'LEDGER_CLOSED');
      assert.equal(await code(writer.append([INVALID], { expectedHead: 7 })), 'LEDGER_CLOSED');
    }),
  );

  if (stop !== undefined) {
    test(
      'the guards on a stopped log: an invalid record, a wrong head, an empty batch are LEDGER_STOPPED; closed comes first',
      withSubject(async (subject) => {
        const log = await subject.backend.open();
        await log.append(RECORDS.slice(0, 1));
        stop(subject);
        assert.notEqual(await code(log.append(RECORDS.slice(1, 2))), 'ok', 'the append meant to stop the log resolved');
        assert.equal(await code(log.append([INVALID], { expectedHead: 7 })), 'LEDGER_STOPPED');
        assert.equal(await code(log.append(RECORDS.slice(1, 2), { expectedHead: 7 })), 'LEDGER_STOPPED');
        assert.equal(await code(log.append([])), 'LEDGER_STOPPED');
        await log.close();
        assert.equal(await code(log.append([INVALID])), 'LEDGER_CLOSED');
      }),
    );
  }
}
