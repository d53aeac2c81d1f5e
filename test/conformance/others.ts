/**
 * What a log does about records that others append (`lib/log.ts`: `read(from, to)`, `refresh`,
 * `lease`, and with `watches`, `watch`): registered by what the backend says it does.
 *
 * - On every backend: a read between two positions; a refresh that, with no one else
 *   appending, gives the head and changes nothing; leases, one holder each.
 * - With several writers: a lease one writer holds is refused to another.
 * - With `watches` (and a second log object that appends: another writer, or the writer beside
 *   a reader): the watch tells of the head when it starts and of the heads the other reaches,
 *   rising; `head` moves only by `refresh`, which makes the records readable; nothing is told
 *   after `unwatch` or a close.
 * - With `watches` and a way to cut the store back (`rewind`): a log that went back is told by
 *   the watch's `onFailure` and by `refresh`, both `LEDGER_STOPPED`, and appends are refused.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import type { EventLog, LedgerError, Record } from '../../lib/index.js';
import { all, type Common, code, type Subject, until } from './common.js';
import { RECORDS } from './records.js';

/** The heads a watch of `log` tells of, and the failure it ends with. */
async function watched(
  log: EventLog<Record>,
): Promise<{ heads: number[]; failure: () => LedgerError | null; unwatch: () => Promise<void> }> {
  assert.ok(log.watch !== undefined, 'a log whose backend declares `watches` has `watch`');
  const heads: number[] = [];
  let failure: LedgerError | null = null;
  const unwatch = await log.watch({
    onHead: (head) => heads.push(head),
    onFailure: (e) => {
      failure = e;
    },
  });
  return { heads, failure: () => failure, unwatch };
}

export function othersTests<S extends Subject>({ test, withSubject, capabilities, rewind }: Common<S>): void {
  test(
    'reading from one position up to another gives the records between them',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(RECORDS);
      assert.deepEqual(await all(log, 2, 5), RECORDS.slice(2, 5));
      assert.deepEqual(await all(log, 0, 20), RECORDS);
      assert.deepEqual(await all(log, 18, 1000), RECORDS.slice(18), 'a `to` past the end reads to the end');
      assert.deepEqual(await all(log, 5, 5), []);
      assert.deepEqual(await all(log, 5, 2), []);
      await log.close();
    }),
  );

  test(
    'refresh, with no one else appending, gives the head and changes nothing',
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.equal(await log.refresh(), 0);
      await log.append(RECORDS.slice(0, 3));
      assert.equal(await log.refresh(), 3);
      const appending = log.append(RECORDS.slice(3, 5));
      assert.equal(await log.refresh(), 5, 'after the append called before it');
      await appending;
      assert.equal(log.head, 5);
      assert.deepEqual(await all(log), RECORDS.slice(0, 5));
      await log.close();
    }),
  );

  test(
    'a lease has one holder: taken again it is refused until released, a read-only log takes none, a close gives it up',
    withSubject(async ({ backend }) => {
      const writer = await backend.open();
      const first = await writer.lease('send');
      assert.ok(first !== null && !first.signal.aborted, 'the first take is granted');
      assert.equal(await writer.lease('send'), null, 'a second take is refused while it is held');
      const other = await writer.lease('other');
      assert.ok(other !== null, 'a lease of another name is apart');
      await first.release();
      assert.ok(first.signal.aborted, 'a released lease is gone');
      const again = await writer.lease('send');
      assert.ok(again !== null, 'taken again once released');
      if (capabilities.readsWhileWriting) {
        const reader = await backend.open({ readOnly: true });
        assert.equal(await code(reader.lease('send')), 'LEDGER_READ_ONLY');
        await reader.close();
      }
      await writer.close();
      assert.ok(again.signal.aborted && other.signal.aborted, 'a close gives up every lease');
    }),
  );

  if (capabilities.severalWriters) {
    test(
      'several writers: a lease one holds is refused to another, which takes it once it is released',
      withSubject(async ({ backend }) => {
        const one = await backend.open();
        const two = await backend.open();
        const held = await one.lease('send');
        assert.ok(held !== null);
        assert.equal(await two.lease('send'), null);
        await held.release();
        const taken = await two.lease('send');
        assert.ok(taken !== null, 'the other writer takes it once released');
        assert.equal(await one.lease('send'), null);
        await one.close();
        await two.close();
        assert.ok(taken.signal.aborted);
      }),
    );
  }

  if (!capabilities.watches) return;
  // the log that watches, and the other that appends: two writers, or a reader beside the writer
  const watcherOptions = capabilities.severalWriters ? {} : { readOnly: true };
  if (!capabilities.severalWriters && !capabilities.readsWhileWriting) return;

  test(
    'a watch tells of the head at its start and of each head another writer reaches; only refresh moves `head`, and reads what they appended',
    withSubject(async ({ backend }) => {
      const writer = await backend.open();
      await writer.append(RECORDS.slice(0, 2));
      const follower = await backend.open(watcherOptions);
      const { heads, failure, unwatch } = await watched(follower);
      await until(() => heads.length > 0, 'the head at the start of the watch');
      assert.equal(heads[0], 2);
      const reached = [2];
      for (const [from, to] of [
        [2, 3],
        [3, 6],
        [6, 7],
      ] as const) {
        reached.push((await writer.append(RECORDS.slice(from, to))).head);
      }
      await until(() => heads.at(-1) === 7, 'the watch to tell of head 7');
      assert.ok(
        heads.every((h, n) => reached.includes(h) && (n === 0 || h > (heads[n - 1] as number))),
        `heads only rise, and each is one the writer reached: ${heads.join(' ')}`,
      );
      assert.equal(follower.head, 2, 'a watch does not move `head`');
      assert.equal(await follower.refresh(), 7);
      assert.equal(follower.head, 7);
      assert.deepEqual(await all(follower, 2), RECORDS.slice(2, 7));
      assert.deepEqual(await follower.resumePoint(), await writer.resumePoint());
      await unwatch();
      // nothing after unwatch: a second watch, still running, hears the next head first
      const second = await watched(follower);
      await writer.append(RECORDS.slice(7, 8));
      await until(() => second.heads.at(-1) === 8, 'the second watch to tell of head 8');
      assert.equal(heads.at(-1), 7, 'the stopped watch told of nothing more');
      // and nothing after a close: the writer's own watch hears the next head
      await follower.close();
      const writers = await watched(writer);
      await writer.append(RECORDS.slice(8, 9));
      await until(() => writers.heads.at(-1) === 9, "the writer's watch to tell of head 9");
      assert.equal(second.heads.at(-1), 8, 'a closed log told of nothing more');
      assert.equal(failure(), null);
      await writer.close();
      assert.equal(
        await code((follower.watch as NonNullable<typeof follower.watch>)({ onHead: () => undefined })),
        'LEDGER_CLOSED',
      );
    }),
  );

  test(
    "an onHead that throws is the caller's error, thrown as an uncaught exception; the watch goes on, failing nothing",
    withSubject(async ({ backend }) => {
      const writer = await backend.open();
      const follower = await backend.open(watcherOptions);
      const bug = new Error('a bug in the callback');
      const thrown: unknown[] = [];
      const uncaught = (e: unknown): void => {
        thrown.push(e);
      };
      process.on('uncaughtException', uncaught);
      try {
        const heads: number[] = [];
        const failures: LedgerError[] = [];
        await (follower.watch as NonNullable<typeof follower.watch>)({
          onHead: (head) => {
            heads.push(head);
            if (head === 1) throw bug;
          },
          onFailure: (e) => failures.push(e),
        });
        await writer.append(RECORDS.slice(0, 1));
        await until(() => thrown.length > 0, "the callback's error to be thrown");
        assert.equal(thrown.length, 1, 'thrown once');
        assert.equal(thrown[0], bug, 'its own error, as it threw it');
        await writer.append(RECORDS.slice(1, 2));
        await until(() => heads.at(-1) === 2, 'the watch to tell of head 2 after the throw');
        assert.deepEqual(failures, [], 'the watch did not fail');
        assert.equal(await follower.refresh(), 2);
      } finally {
        process.off('uncaughtException', uncaught);
        await follower.close();
        await writer.close();
      }
    }),
  );

  if (rewind === undefined) return;
  test(
    'a store that went back below the head: the watch ends with LEDGER_STOPPED, refresh fails with it, and so do appends',
    withSubject(async (subject) => {
      const { backend } = subject;
      const writer = await backend.open();
      await writer.append(RECORDS.slice(0, 5));
      const follower = await backend.open(watcherOptions);
      assert.equal(await follower.refresh(), 5);
      const { failure } = await watched(follower);
      await rewind(subject, 3);
      await until(() => failure() !== null, 'the watch to end');
      assert.equal(failure()?.code, 'LEDGER_STOPPED');
      assert.equal(await code(follower.refresh()), 'LEDGER_STOPPED');
      assert.equal(follower.head, 5, 'the head stays where the log had reached');
      if (capabilities.severalWriters) assert.equal(await code(follower.append(RECORDS.slice(5, 6))), 'LEDGER_STOPPED');
      await follower.close();
      await writer.close();
    }),
  );
}
