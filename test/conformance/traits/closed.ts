/**
 * A trait of every operation: on a closed log, each fails with `LEDGER_CLOSED`, on a writable
 * log and on a read-only one alike, and `close` again does nothing; `await using` closes a log
 * as its scope ends.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import type { EventLog, Record } from '../../../lib/index.js';
import { all, type Common, code, type Subject } from '../common.js';
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

/** `watch`, on a backend that `watches`. */
const WATCH: readonly [string, (log: EventLog<Record>) => Promise<unknown>][] = [
  ['watch', (log) => log.watch?.({ onHead: () => undefined }) ?? Promise.reject(new Error('no watch'))],
];

export function closedTrait<S extends Subject>({ test, withSubject, capabilities }: Common<S>): void {
  test(
    'await using closes the log as its scope ends, and dispose again does nothing',
    withSubject(async ({ backend }) => {
      let held: EventLog<Record>;
      {
        await using log = await backend.open();
        await log.append(RECORDS.slice(0, 1));
        held = log;
      }
      assert.equal(await code(held.append(RECORDS.slice(1, 2))), 'LEDGER_CLOSED');
      await held[Symbol.asyncDispose]();
      await using again = await backend.open(); // the writer's place was given up
      assert.deepEqual(await all(again), RECORDS.slice(0, 1));
    }),
  );
  for (const readOnly of [false, true]) {
    for (const [name, operation] of [...OPERATIONS, ...(capabilities.watches === true ? WATCH : [])]) {
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
          await log[Symbol.asyncDispose]();
        }),
      );
    }
  }
}
