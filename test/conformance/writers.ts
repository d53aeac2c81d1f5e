/**
 * One writer, or several (`lib/log.ts`, `LogCapabilities.severalWriters` and
 * `readsWhileWriting`): registered by what the backend says it does. One writer: a second
 * writable open is refused with `LEDGER_LOCKED` while the first holds the log, and a reader
 * opens beside it, or is refused too. Several: writers append at once, each `expectedHead`
 * deciding who is first; with `keyedAppends`, an append with keys goes past records of other
 * keys and gives them, and meets a conflict at a record of one of its keys or of none.
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
    if (capabilities.keyedAppends === true) keyedTests({ test, withSubject, capabilities });
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

/** `AppendOptions.keys`, on a backend with `keyedAppends`. */
function keyedTests<S extends Subject>({
  test,
  withSubject,
}: Pick<Common<S>, 'test' | 'withSubject' | 'capabilities'>): void {
  test(
    'keyed appends: past records of other keys, which it gives; a conflict at a record of one of its keys, or of none',
    withSubject(async ({ backend }) => {
      const one = await backend.open();
      const two = await backend.open();
      assert.deepEqual(await one.append(RECORDS.slice(0, 2), { expectedHead: 0, keys: ['a', 'b'] }), {
        from: 0,
        head: 2,
      });
      assert.deepEqual(await two.append(RECORDS.slice(2, 3), { expectedHead: 0, keys: ['c'] }), {
        from: 2,
        head: 3,
        passed: RECORDS.slice(0, 2),
      });
      assert.equal(two.head, 3, 'past the records it went past, and its own');
      assert.equal(await code(one.append(RECORDS.slice(3, 4), { expectedHead: 2, keys: ['c'] })), 'LEDGER_CONFLICT');
      assert.equal(await code(one.append(RECORDS.slice(3, 4), { expectedHead: 0, keys: ['b'] })), 'LEDGER_CONFLICT');
      // appended without keys: a record that clashes with every key
      assert.deepEqual(await one.append(RECORDS.slice(3, 4), { expectedHead: 3 }), { from: 3, head: 4 });
      assert.equal(await code(two.append(RECORDS.slice(4, 5), { expectedHead: 3, keys: ['z'] })), 'LEDGER_CONFLICT');
      assert.equal(
        await code(two.append(RECORDS.slice(4, 6), { expectedHead: 4, keys: ['z'] })),
        'LEDGER_INVALID_RECORD',
        'one key a record',
      );
      assert.deepEqual(await all(one), RECORDS.slice(0, 4), 'nothing of a refused append');
      // resumes at its head, after a keyed append that went past others' records
      assert.deepEqual(await one.append(RECORDS.slice(4, 5), { expectedHead: 4, keys: ['d'] }), { from: 4, head: 5 });
      assert.deepEqual(await two.append(RECORDS.slice(5, 6), { expectedHead: 4, keys: ['e'] }), {
        from: 5,
        head: 6,
        passed: RECORDS.slice(4, 5),
      });
      const point = await two.resumePoint();
      await one.close();
      await two.close();
      const replayed: unknown[] = [];
      const again = await backend.open({ resume: point, replay: (record) => void replayed.push(record) });
      assert.equal(again.head, 6);
      assert.deepEqual(replayed, []);
      assert.deepEqual(await all(again), RECORDS.slice(0, 6));
      await again.close();
    }),
  );
}
