/**
 * Resuming (`lib/log.ts`, `OpenOptions.resume`): an open resumed at a point the log gave replays
 * only the records after it; at a point the log does not hold (shorter, or another record before
 * it), the open fails with `LEDGER_RESUME_MISMATCH` and changes nothing.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { all, code, type Run, type Subject } from './common.js';
import { decided, RECORDS, turn } from './records.js';

export function resumeTests<S extends Subject>({ test, withSubject }: Run<S>): void {
  test(
    'an open resumed at a point replays only the records after it, and reads all',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.deepEqual(await log.resumePoint(), { position: 0, cursor: null, fingerprint: '' });
      await log.append(RECORDS.slice(0, 8));
      const point = await log.resumePoint();
      assert.equal(point.position, 8);
      assert.match(point.fingerprint, /^[0-9a-f]{64}$/);
      await log.append(RECORDS.slice(8));
      await log.close();
      const seen: number[] = [];
      const again = await backend.open({
        resume: point,
        replay: async (record, position) => {
          await Promise.resolve();
          assert.deepEqual(record, RECORDS[position]);
          seen.push(position);
        },
      });
      assert.deepEqual(seen, RECORDS.map((_, n) => n).slice(8), 'replayed from the point on, in order, each awaited');
      assert.equal(again.head, RECORDS.length);
      assert.deepEqual(await all(again), RECORDS);
      assert.deepEqual(await all(again, 17), RECORDS.slice(17));
      const head = await again.resumePoint();
      await again.append([decided(turn('after', 1))]);
      await again.close();
      const third = await backend.open({ resume: head, replay: (_, position) => void seen.push(position) });
      assert.deepEqual(seen.slice(-1), [RECORDS.length]);
      assert.equal(third.head, RECORDS.length + 1);
      await third.close();
    }),
  );

  test(
    'an open resumed at a point the log does not hold fails, and changes nothing',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(RECORDS.slice(0, 5));
      const point = await log.resumePoint();
      await log.close();
      for (const resume of [
        { ...point, position: 50 },
        { ...point, fingerprint: '0'.repeat(64) },
      ]) {
        assert.equal(await code(backend.open({ resume })), 'LEDGER_RESUME_MISMATCH');
      }
      const again = await backend.open({ resume: point });
      assert.equal(again.head, 5);
      await again.append(RECORDS.slice(5, 6));
      await again.close();
    }),
  );
}
