/**
 * Durable, and in files (`LogCapabilities.durable`, `files`): what a durable backend
 * acknowledged outlives the backend object (a fresh one of the same storage, as another process
 * or a restart makes it, reads it), and a backend in files keeps them at the path its name
 * gives. That an acknowledged append survives a crash of the process and of the machine is the
 * crash harnesses' to show, with real processes killed and power losses simulated below the
 * file system (`test/crash/`, `test/postgres/processes.test.ts`).
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { all, type Common, type Subject } from './common.js';
import { RECORDS } from './records.js';

export function durableTests<S extends Subject>({ test, withSubject, capabilities }: Common<S>): void {
  if (capabilities.durable) {
    test(
      'what was acknowledged is read by a fresh backend object of the same storage',
      withSubject(async ({ backend, fresh }) => {
        assert.ok(fresh !== undefined, "a durable backend's subject gives `fresh`, a new backend of the same storage");
        const log = await backend.open();
        await log.append(RECORDS.slice(0, 3));
        await log.append(RECORDS.slice(3, 4));
        await log.close();
        const again = await fresh().open({ readOnly: true });
        assert.deepEqual(await all(again), RECORDS.slice(0, 4));
        await again.close();
      }),
    );
  }
  if (capabilities.files) {
    test(
      'the log is at the path its name gives',
      withSubject(async ({ backend }) => {
        const log = await backend.open();
        await log.append(RECORDS.slice(0, 1));
        await log.close();
        assert.ok(existsSync(backend.name), `nothing at ${backend.name}`);
      }),
    );
  }
}
