/**
 * One writer, or several (`lib/log.ts`, `LogCapabilities.severalWriters` and
 * `readsWhileWriting`): registered by what the backend says it does. One writer: a second
 * writable open is refused with `LEDGER_LOCKED` while the first holds the log, and a reader
 * opens beside it, or is refused too. Several: writers append at once, each `expectedHead`
 * deciding who is first.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { all, type Common, code, type Subject } from './common.js';
import { RECORDS } from './records.js';

export function writerTests<S extends Subject>({ test, withSubject, capabilities }: Common<S>): void {
  if (capabilities.severalWriters) {
    test(
      'several writers: both open at once, the second expecting an old head gets a conflict, and each reads what both appended',
      withSubject(async ({ backend }) => {
        const one = await backend.open();
        const two = await backend.open();
        assert.deepEqual(await one.append(RECORDS.slice(0, 2), { expectedHead: 0 }), { from: 0, head: 2 });
        assert.equal(await code(two.append(RECORDS.slice(2, 3), { expectedHead: 0 })), 'LEDGER_CONFLICT');
        assert.deepEqual(await two.append(RECORDS.slice(2, 3), { expectedHead: 2 }), { from: 2, head: 3 });
        assert.deepEqual(await all(one), RECORDS.slice(0, 3));
        assert.deepEqual(await all(two), RECORDS.slice(0, 3));
        await one.close();
        await two.close();
      }),
    );
    return;
  }

  test(
    'a second writer is refused while the first holds the log, and opens once it is closed',
    withSubject(async ({ backend }) => {
      const first = await backend.open();
      assert.equal(await code(backend.open()), 'LEDGER_LOCKED');
      await first.close();
      const second = await backend.open();
      await second.close();
    }),
  );

  if (capabilities.readsWhileWriting) {
    test(
      'a reader opens while a writer holds the log, and refuses appends',
      withSubject(async ({ backend }) => {
        const writer = await backend.open();
        await writer.append(RECORDS.slice(0, 1));
        const reader = await backend.open({ readOnly: true });
        assert.equal(await code(reader.append(RECORDS.slice(1, 2))), 'LEDGER_READ_ONLY');
        assert.deepEqual(await all(reader), RECORDS.slice(0, 1));
        await reader.close();
        await writer.close();
      }),
    );
  } else {
    test(
      'a reader is refused while a writer holds the log (readsWhileWriting: false), and opens once it is closed',
      withSubject(async ({ backend }) => {
        const writer = await backend.open();
        await writer.append(RECORDS.slice(0, 1));
        assert.equal(await code(backend.open({ readOnly: true })), 'LEDGER_LOCKED');
        await writer.close();
        const reader = await backend.open({ readOnly: true });
        assert.equal(await code(reader.append(RECORDS.slice(1, 2))), 'LEDGER_READ_ONLY');
        assert.deepEqual(await all(reader), RECORDS.slice(0, 1));
        await reader.close();
      }),
    );
  }
}
