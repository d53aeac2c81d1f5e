/**
 * The Honcho ledger beside other writers (`lib/honcho/ledger.ts`, "Several writers"):
 * registered by what the backend says it does.
 *
 * - Several writers: two ledgers deciding the same items at once decide each once, the loser
 *   refused with `LEDGER_ALREADY_DECIDED`; a batch that met a conflict is checked again after
 *   the catch-up and lands after the other's records. With `keyedAppends`, ledgers deciding
 *   items of their own take turns without a catch-up: each append goes past the other's
 *   records, which the ledger takes in, in log order.
 * - `watches`: a ledger's `follow()` and `waitForOutbox()` see what another writer appends
 *   (another ledger, or the writer beside a read-only one), as it appends it; records another
 *   writer appends that break the rules stop the ledger with `LEDGER_DAMAGED` at their position.
 * - Every backend: the sender lease has one holder, and the outbox its holder sees once it
 *   has it is current (what the last holder sent is off it).
 *
 * A test that opens two ledgers on one log gives the run's options (a read model) to the one it
 * looks at, and none to the other.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import {
  Ledger,
  type LedgerOptions,
  type LogBackend,
  type LogCapabilities,
  type LogEntry,
  type Record,
} from '../../lib/index.js';
import { code, type Run, type Subject, until } from './common.js';
import { decided, sent, skip, turn } from './records.js';

export function ledgerWriterTests<S extends Subject>(
  { test, withSubject }: Run<S>,
  capabilities: LogCapabilities,
  options?: () => LedgerOptions,
): void {
  const theirs = (): LedgerOptions => ({ ...options?.() });

  if (capabilities.severalWriters) {
    test(
      'two ledgers deciding the same items at once: each is decided once, the other refused with LEDGER_ALREADY_DECIDED',
      withSubject(async ({ backend }) => {
        const one = await Ledger.open(backend, theirs());
        const two = await Ledger.open(backend);
        const items = Array.from({ length: 40 }, (_, n) => turn('both', n));
        const [ones, twos] = await Promise.all(
          [one, two].map((ledger) => Promise.all(items.map((item) => code(ledger.append(decided(item)))))),
        );
        items.forEach((_, n) => {
          const pair = [ones?.[n], twos?.[n]].sort();
          assert.deepEqual(pair, ['LEDGER_ALREADY_DECIDED', 'ok'], `item ${n}: one decides it, the other is refused`);
        });
        await one.catchUp();
        await two.catchUp();
        for (const ledger of [one, two]) {
          assert.equal(ledger.size, 40);
          assert.equal((await ledger.counts()).decided, 40);
        }
        await one.close();
        await two.close();
      }),
    );

    test(
      'a batch that meets a conflict is checked again once the other ledger’s records are in, and lands after them',
      withSubject(async ({ backend }) => {
        const one = await Ledger.open(backend, theirs());
        const two = await Ledger.open(backend);
        await two.append(decided(turn('a', 1)));
        assert.equal(one.size, 0, 'the other’s record is not in yet');
        await one.append(decided(turn('a', 2)));
        assert.equal(one.size, 2);
        assert.equal(await code(one.append(decided(turn('a', 1)))), 'LEDGER_ALREADY_DECIDED');
        const records = [];
        for await (const record of one.records()) records.push(record);
        assert.deepEqual(records, [decided(turn('a', 1)), decided(turn('a', 2))]);
        await one.close();
        await two.close();
      }),
    );
  }

  if (capabilities.severalWriters && capabilities.keyedAppends === true) {
    test(
      'keyed appends: two ledgers deciding items of their own take turns with no catch-up, each taking in the other’s records in log order',
      withSubject(async ({ backend }) => {
        let catchUps = 0;
        // counts what a catch-up does to the log: a refresh to the store's head, and reads
        const counted: LogBackend<Record> = {
          ...backend,
          open: async (openOptions) => {
            const log = await backend.open(openOptions);
            return new Proxy(log, {
              get(target, property) {
                if (property === 'refresh' || property === 'read') catchUps++;
                const value: unknown = Reflect.get(target, property, target);
                return typeof value === 'function' ? value.bind(target) : value;
              },
            });
          },
        };
        const one = await Ledger.open(counted, theirs());
        const two = await Ledger.open(counted);
        const expected: Record[] = [];
        for (let n = 0; n < 3; n++) {
          for (const [ledger, session] of [
            [one, 'one'],
            [two, 'two'],
          ] as const) {
            const record = decided(turn(session, n));
            await ledger.append(record);
            expected.push(record);
          }
        }
        assert.equal(catchUps, 0, 'no catch-up');
        assert.equal(one.size, 5, 'one took in two’s records as its appends went past them');
        assert.equal((await one.counts()).decided, 5);
        assert.equal(two.size, 6);
        assert.equal((await two.counts()).decided, 6);
        assert.equal(await code(two.append(decided(turn('one', 2)))), 'LEDGER_ALREADY_DECIDED', 'its state has them');
        const records: Record[] = [];
        for await (const record of two.records()) records.push(record);
        assert.deepEqual(records, expected, 'in the order appended');
        await one.close();
        await two.close();
      }),
    );
  }

  if (capabilities.watches && (capabilities.severalWriters || capabilities.readsWhileWriting)) {
    const followerOptions = (): LedgerOptions =>
      capabilities.severalWriters ? theirs() : { ...theirs(), readOnly: true };

    test(
      "a ledger's follow() and waitForOutbox() see what another writer appends, as it appends it",
      withSubject(async ({ backend }) => {
        const writer = await Ledger.open(backend);
        await writer.append(decided(turn('w', 0), skip()));
        const follower = await Ledger.open(backend, followerOptions());
        const stop = new AbortController();
        const seen: LogEntry[] = [];
        const following = (async () => {
          for await (const entry of follower.follow(0, stop.signal)) seen.push(entry);
        })();
        const waiting = follower.waitForOutbox();
        await writer.append(decided(turn('w', 1)));
        await waiting;
        await writer.append(sent(turn('w', 1)));
        await until(() => seen.length === 3, 'the follower to see 3 records');
        assert.deepEqual(
          seen,
          [decided(turn('w', 0), skip()), decided(turn('w', 1)), sent(turn('w', 1))].map((record, position) => ({
            position,
            record,
          })),
        );
        assert.equal(follower.size, 3);
        assert.deepEqual(await follower.counts(), { decided: 2, sent: 1, waiting: 0, failed: 0, skipped: 1 });
        stop.abort();
        await following;
        await follower.close();
        await writer.close();
      }),
    );

    test(
      'records another writer appends that break the rules stop the ledger with LEDGER_DAMAGED at their position',
      withSubject(async ({ backend }) => {
        const raw = await backend.open(); // a log keeps no rules: a second `decided` goes in
        const follower = await Ledger.open(backend, followerOptions());
        let seen = 0;
        // its outcome taken at once: the follower may stop before the append that stops it returns
        const following = code(
          (async () => {
            for await (const _ of follower.follow(0)) seen++;
          })(),
        );
        await raw.append([decided(turn('x', 1))]);
        await until(() => seen === 1, 'the follower to see the first record');
        await raw.append([decided(turn('x', 1))]);
        assert.equal(await following, 'LEDGER_DAMAGED');
        await assert.rejects(follower.catchUp(), /:2: .*decided/);
        assert.equal(follower.size, 1, 'what came before it is in');
        if (capabilities.severalWriters)
          assert.equal(await code(follower.append(decided(turn('x', 2)))), 'LEDGER_DAMAGED');
        assert.equal(await code(follower.waitForOutbox()), 'LEDGER_DAMAGED');
        await follower.close();
        await raw.close();
      }),
    );
  }

  test(
    'the sender lease has one holder, and the outbox it sees once it holds it is current',
    withSubject(async ({ backend }) => {
      const one = await Ledger.open(backend, theirs());
      await one.append(decided(turn('s', 1)));
      const lease = await one.senderLease();
      assert.ok(lease !== null);
      assert.equal(await one.senderLease(), null, 'one holder at a time');
      await one.append(sent(turn('s', 1)));
      await lease.release();
      if (capabilities.severalWriters) {
        const two = await Ledger.open(backend);
        const held = await one.senderLease();
        assert.ok(held !== null);
        assert.equal(await two.senderLease(), null, 'refused to another writer while the first holds it');
        await one.append(decided(turn('s', 2)));
        await one.append(sent(turn('s', 2)));
        await held.release();
        const taken = await two.senderLease();
        assert.ok(taken !== null, 'taken once released');
        assert.deepEqual(await two.outbox(), [], 'what the first holder sent is off the outbox');
        assert.deepEqual(await two.sentIds(turn('s', 2)), ['msg-1']);
        await two.close();
        assert.ok(taken.signal.aborted, 'a close gives it up');
      }
      await one.close();
      if (capabilities.readsWhileWriting) {
        const reader = await Ledger.open(backend, { readOnly: true });
        assert.equal(await code(reader.senderLease()), 'LEDGER_READ_ONLY');
        await reader.close();
      }
    }),
  );
}
