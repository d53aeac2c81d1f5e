/**
 * A trait of every operation: on a closed log, each fails with `LEDGER_CLOSED`, on a writable
 * log and on a read-only one alike, and `close` again does nothing.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import type { EventLog, Record } from '../../../lib/index.js';
import { all, code, type Run, type Subject } from '../common.js';
import { RECORDS } from '../records.js';

/** Every operation of a log, by name, as a promise. */
const OPERATIONS: readonly [string, (log: EventLog<Record>) => Promise<unknown>][] = [
  ['append', (log) => log.append(RECORDS.slice(0, 1))],
  ['append of an empty batch', (log) => log.append([])],
  ['read', (log) => all(log)],
  ['read from a position', (log) => all(log, 1)],
  ['resumePoint', (log) => log.resumePoint()],
  ['refresh', (log) => log.refresh()],
  ['lease', (log) => log.lease('send')],
];

export function closedTrait<S extends Subject>({ test, withSubject }: Run<S>): void {
  for (const readOnly of [false, true]) {
    for (const [name, operation] of OPERATIONS) {
      test(
        `${name} on a closed ${readOnly ? 'read-only' : 'writable'} log fails with LEDGER_CLOSED`,
        withSubject(async ({ backend }) => {
          const writer = await backend.open();
          await writer.append(RECORDS.slice(0, 2));
          await writer.close();
          const log = readOnly ? await backend.open({ readOnly }) : writer;
          if (readOnly) await log.close();
          assert.equal(await code(operation(log)), 'LEDGER_CLOSED');
          await log.close(); // again: nothing
        }),
      );
    }
  }
}
