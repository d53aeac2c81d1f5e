/**
 * Several writers on one PostgreSQL log, in one process, each with its own sessions: conflicts
 * on `expectedHead`, what a writer reads of the others' records, hearing of their appends
 * (`watch`), and a reader that tails the log while they write.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postgresBackend } from '../../backends/postgres/index.js';
import { MAX_PASSED } from '../../backends/postgres/schema.js';
import { ConflictError, honchoCodec, Ledger, type Record, type RecordCodec } from '../../lib/index.js';
import { all, decided, edit, failure, rejects, skip, turn } from '../support/ledger.js';
import { freshLog, logUri, pgBackend, pgSubject, until } from '../support/pg-cluster.js';

const record = (who: string, n: number): Record => decided(edit(who, n), skip(who));

test("two writers expecting the same head: one lands, the other gets LEDGER_CONFLICT with the head it found, reads the winner's records and lands after them", async () => {
  const backend = await pgBackend();
  const a = await backend.open();
  await a.append([record('a', 0)]);
  const b = await backend.open();
  for (let round = 0; round < 10; round++) {
    const head = Math.max(a.head, b.head);
    const before = new Map([a, b].map((log) => [log, log.head]));
    const [fromA, fromB] = await Promise.allSettled([
      a.append([record('a', 1 + 2 * round)], { expectedHead: head }),
      b.append([record('b', 2 * round), record('b', 2 * round + 1)], { expectedHead: head }),
    ]);
    const won = [fromA, fromB].filter((r) => r.status === 'fulfilled');
    assert.is(won.length, 1, `round ${round}: exactly one of the two lands`);
    const [winner, loser, lost] = fromA.status === 'fulfilled' ? [a, b, fromB] : [b, a, fromA];
    assert.ok(
      lost.status === 'rejected' && lost.reason instanceof ConflictError,
      `round ${round}: the other is a conflict`,
    );
    const conflict = lost.reason as ConflictError;
    assert.equal([conflict.expected, conflict.actual], [head, winner.head]);
    assert.is(loser.head, before.get(loser), "the loser's head is what it reached itself, unmoved by the conflict");
    const theirs = await all(loser, head);
    assert.is(theirs.length, winner.head - head, "the loser reads the winner's records, past its own head");
    const retry = lost === fromB ? [record('b', 2 * round), record('b', 2 * round + 1)] : [record('a', 1 + 2 * round)];
    assert.equal(await loser.append(retry, { expectedHead: conflict.actual }), {
      from: conflict.actual,
      head: conflict.actual + retry.length,
    });
  }
  assert.equal(await all(a), await all(b));
  await a.close();
  await b.close();
});

test("a watch hears of every head other writers commit, a read-only log's too, and stops when told", async () => {
  const backend = await pgBackend();
  const writer = await backend.open();
  await writer.append([record('w', 0)]);
  const reader = await backend.open({ readOnly: true });
  const heard: number[] = [];
  const readerHeard: number[] = [];
  const other = await backend.open();
  try {
    // a watch keeps the process alive while it listens: the logs' close ends it, whatever fails
    const unwatch = await other.watch({ onHead: (head) => heard.push(head) });
    await reader.watch({ onHead: (head) => readerHeard.push(head) });
    assert.equal(heard, [1], 'the head when the watch starts');
    for (let n = 1; n <= 20; n++) await writer.append([record('w', n)]);
    await until(async () => heard.at(-1) === 21 && readerHeard.at(-1) === 21, 'the watches to hear of head 21');
    for (const heads of [heard, readerHeard])
      assert.ok(
        heads.every((h, n) => n === 0 || h > (heads[n - 1] as number)),
        `heads only rise: ${heads.join(' ')}`,
      );
    assert.equal(
      await all(reader, 1),
      Array.from({ length: 20 }, (_, n) => record('w', n + 1)),
      'and read gives the records',
    );
    await unwatch();
    await writer.append([record('w', 21)]);
    await until(async () => readerHeard.at(-1) === 22, 'the reader to hear of head 22');
    assert.is(heard.at(-1), 21, 'nothing heard after unwatch, while the other watch heard of 22');
  } finally {
    await Promise.all([writer.close(), reader.close(), other.close()]);
  }
  await rejects(other.watch({ onHead: () => undefined }), 'LEDGER_CLOSED');
});

test('a reader tailing the log while three writers append never sees a hole, nor a later record before an earlier one', async () => {
  const backend = await pgBackend();
  const writers = await Promise.all([0, 1, 2].map(() => backend.open()));
  const reader = await backend.open({ readOnly: true });
  const seen: Record[] = [];
  let writing = true;
  const tail = (async () => {
    let reads = 0;
    while (writing || reads === 0) {
      for await (const r of reader.read(seen.length)) seen.push(r);
      reads++;
    }
    return reads;
  })();
  await Promise.all(
    writers.map(async (w, n) => {
      for (let b = 0; b < 60; b++) await w.append([record(`w${n}`, 2 * b), record(`w${n}`, 2 * b + 1)]);
    }),
  );
  writing = false;
  const reads = await tail;
  for await (const r of reader.read(seen.length)) seen.push(r);
  const final = await all(writers[0] as (typeof writers)[0]);
  assert.is(final.length, 360);
  assert.equal(seen, final, `what the tailing reader saw, over ${reads} reads, is the log's order`);
  await Promise.all([...writers, reader].map((l) => l.close()));
});

test('an append to a log that another writer changed under it is refused, not misplaced: a ConflictError names both heads', async () => {
  const backend = await pgBackend(freshLog());
  const a = await backend.open();
  const b = await backend.open();
  await a.append([decided(turn('c', 1))]);
  const e = await failure(b.append([decided(turn('c', 2))], { expectedHead: 0 }));
  assert.ok(e instanceof ConflictError);
  assert.match(
    (e as Error).message,
    /expected the log's head at 0, but it is at 1; read what was appended and try again$/,
  );
  await a.close();
  await b.close();
});

test("an append to a log that went back below the writer's head is refused and stops the log: nothing is written under the records it had", async () => {
  const { backend, rewind, cleanup } = await pgSubject();
  const writer = await backend.open();
  try {
    await writer.append([record('gone', 0), record('gone', 1), record('gone', 2)]);
    await rewind(1); // a failover to a standby that had only the first
    const e = await rejects(
      writer.append([record('gone', 3)]),
      'LEDGER_STOPPED',
      /the log went back: it holds 1 records, while this log had read or appended 3/,
    );
    assert.is((e as { runbook?: unknown }).runbook, 'ledger-went-back');
    await rejects(writer.append([record('gone', 4)]), 'LEDGER_STOPPED');
    const reader = await backend.open({ readOnly: true });
    assert.equal(await all(reader), [record('gone', 0)], 'the log holds only what it held');
    await reader.close();
  } finally {
    await writer.close();
    await cleanup();
  }
});

test(`a keyed append goes past at most ${MAX_PASSED} records of others: further behind, a conflict, nothing written`, async () => {
  const backend = await pgBackend();
  const a = await backend.open();
  const b = await backend.open();
  const theirs = Array.from({ length: MAX_PASSED + 1 }, (_, n) => record('a', n));
  await a.append(theirs, { expectedHead: 0, keys: theirs.map((_, n) => `a${n}`) });
  const mine = [record('b', 0)];
  const conflict = await rejects(b.append(mine, { expectedHead: 0, keys: ['b0'] }), 'LEDGER_CONFLICT');
  assert.equal([(conflict as ConflictError).expected, (conflict as ConflictError).actual], [0, MAX_PASSED + 1]);
  assert.is((await all(b)).length, MAX_PASSED + 1, 'nothing written');
  const appended = await b.append(mine, { expectedHead: 1, keys: ['b0'] });
  assert.equal([appended.from, appended.head], [MAX_PASSED + 1, MAX_PASSED + 2]);
  assert.equal(appended.passed, theirs.slice(1), `${MAX_PASSED} records gone past, in order`);
  await a.close();
  await b.close();
});

test('keys that PostgreSQL text cannot hold (U+0000 in an edit id) land with their batch, through the log and through a ledger', async () => {
  const backend = await pgBackend();
  const a = await backend.open();
  const b = await backend.open();
  const nul = decided(edit('a\u0000b', 0), skip('a NUL in the id'));
  await a.append([nul], { expectedHead: 0, keys: ['a\u0000b|0'] });
  // past it, by a key that is its own: a clash would be a conflict, a key text refuses a failure
  const appended = await b.append([record('b', 0)], { expectedHead: 0, keys: ['b0'] });
  assert.equal(appended.passed, [nul]);
  await a.close();
  await b.close();
  const ledger = await Ledger.open(backend);
  await Promise.all([
    ledger.append(decided(edit('c\u0000d', 1), skip('another'))),
    ledger.append(decided(turn('beside', 1), skip('queued with it'))),
  ]);
  assert.is(ledger.size, 4);
  assert.ok(await ledger.isDecided(edit('c\u0000d', 1)));
  await ledger.close();
});

test('a codec whose line holds a newline, against its contract: the batch is refused whole, nothing written', async () => {
  // the lines go to the server as one text, split at newlines: the count sent with it tells
  const broken = (record: Record): string => honchoCodec.encode(record).replace(',', ',\n');
  const codec: RecordCodec<Record> = { ...honchoCodec, encode: broken, encodeChecked: broken };
  const log = await postgresBackend(await logUri(freshLog()), { codec }).open();
  await rejects(
    log.append([record('n', 0), record('n', 1)]),
    'LEDGER_IO',
    /a batch of 2 records came as 4 lines: a line holds a newline/,
  );
  assert.is(await log.refresh(), 0, 'nothing written');
  await log.close();
});

test.run();
