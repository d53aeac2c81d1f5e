/**
 * The fault wrapper, each kind of fault with the Honcho ledger on top: what the caller sees, what
 * the ledger believes, and what the log holds when it is opened again.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type FaultPlan, type FaultyBackend, faultyBackend, injectedFault } from '../backends/faults.js';
import { memoryBackend } from '../backends/memory.js';
import {
  honchoCodec,
  isLedgerError,
  jsonlBackend,
  Ledger,
  LedgerIoError,
  type LogBackend,
  type Record,
} from '../lib/index.js';
import { all, decided, failure, sent, turn, withHome } from './support/ledger.js';

const faultyMemory = (plan: FaultPlan): FaultyBackend<Record> =>
  faultyBackend(memoryBackend({ codec: honchoCodec }), plan);

const decision = (n: number): Record => decided(turn('chat-1', n));

/** The code of the ledger error `promise` rejects with. */
async function code(promise: Promise<unknown>): Promise<string> {
  const e = await failure(promise);
  assert.ok(isLedgerError(e), `not a ledger error: ${String(e)}`);
  return e.code;
}

/** What a read-only open of `backend` reads. */
async function stored(backend: LogBackend<Record>): Promise<Record[]> {
  const log = await backend.open({ readOnly: true });
  try {
    return await all(log);
  } finally {
    await log.close();
  }
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('an append failed before the write changes nothing, neither the state nor the log, and the ledger goes on', async () => {
  const backend = faultyMemory({ failAppends: [{ at: 2, when: 'before' }] });
  const ledger = await Ledger.open(backend);
  await ledger.append(decision(1));

  const error = await failure(ledger.append(decision(2)));
  assert.instance(error, LedgerIoError);
  assert.is((error as LedgerIoError).errno, 'EIO');
  assert.is((error as LedgerIoError).message, 'memory:: injected fault: append 2 failed before the write (EIO)');
  assert.is(injectedFault(error)?.kind, 'before');
  assert.is(injectedFault(error)?.append, 2);
  assert.not.ok(await ledger.isDecided(turn('chat-1', 2)));
  assert.is(ledger.size, 1);
  assert.equal(await stored(backend), [decision(1)]);

  // a retry is append 3, which the plan leaves alone
  await ledger.append(decision(2));
  assert.ok(await ledger.isDecided(turn('chat-1', 2)));
  await ledger.close();
  assert.equal(await stored(backend), [decision(1), decision(2)]);
  assert.equal(backend.stats, {
    attempted: 3,
    acknowledged: 2,
    rejected: 1,
    pending: 0,
    failedBefore: 1,
    failedAfter: 0,
    lost: 0,
    crashes: 0,
  });
});

test('an append failed after the write: the caller sees an error, the ledger does not believe it, the log stops, and a reopen shows it', async () => {
  const backend = faultyMemory({ failAppends: [{ at: 2, when: 'after' }] });
  const ledger = await Ledger.open(backend);
  await ledger.append(decision(1));

  const error = await failure(ledger.append(decision(2)));
  assert.instance(error, LedgerIoError);
  assert.is(injectedFault(error)?.kind, 'after');
  assert.match((error as Error).message, 'injected fault: append 2 failed after the write: its records are in the log');
  assert.not.ok(await ledger.isDecided(turn('chat-1', 2)));
  assert.equal((await ledger.counts()).decided, 1);
  assert.equal(
    (await ledger.outbox()).map((d) => d.item),
    [turn('chat-1', 1)],
  );
  // ... but the record is in the log
  const read: Record[] = [];
  for await (const record of ledger.records()) read.push(record);
  assert.equal(read, [decision(1), decision(2)]);

  // the writer no longer knows where the log ends: every append is refused until a reopen
  const stopped = await failure(ledger.append(decision(3)));
  assert.ok(isLedgerError(stopped, 'LEDGER_STOPPED'), String(stopped));
  assert.is(injectedFault(stopped), undefined);
  await ledger.close();

  const again = await Ledger.open(backend);
  assert.ok(await again.isDecided(turn('chat-1', 2)));
  assert.not.ok(await again.isDecided(turn('chat-1', 3)));
  // a caller that retries blindly is told the record is there already
  assert.is(await code(again.append(decision(2))), 'LEDGER_ALREADY_DECIDED');
  await again.append(sent(turn('chat-1', 2)));
  assert.equal(await again.sentIds(turn('chat-1', 2)), ['msg-1']);
  await again.close();
  assert.equal(await stored(backend), [decision(1), decision(2), sent(turn('chat-1', 2))]);
});

test('every append after the Nth fails before the write with ENOSPC, across reopens', async () => {
  const backend = faultyMemory({ failAppendsAfter: 2 });
  const ledger = await Ledger.open(backend);
  await ledger.append(decision(1));
  await ledger.append(decision(2));
  for (const n of [3, 4]) {
    const error = await failure(ledger.append(decision(n)));
    assert.is((error as LedgerIoError).errno, 'ENOSPC');
    assert.match((error as Error).message, `append ${n} failed before the write: every append after 2 fails`);
  }
  assert.is(ledger.size, 2);
  await ledger.close();

  const again = await Ledger.open(backend);
  assert.is(again.size, 2);
  assert.is(injectedFault(await failure(again.append(decision(3))))?.append, 5);
  await again.close();
  assert.equal(await stored(backend), [decision(1), decision(2)]);
  assert.is(backend.stats.failedBefore, 3);
});

/** Appends turns 1..60 one by one through a ledger; gives the turns that failed, after checking that exactly the others landed. */
async function randomRun(plan: FaultPlan): Promise<number[]> {
  const backend = faultyMemory(plan);
  const ledger = await Ledger.open(backend);
  const failed: number[] = [];
  for (let n = 1; n <= 60; n++) {
    try {
      await ledger.append(decision(n));
    } catch (e) {
      assert.is(injectedFault(e)?.append, n, String(e));
      failed.push(n);
    }
  }
  await ledger.close();
  const landed = Array.from({ length: 60 }, (_, n) => n + 1).filter((n) => !failed.includes(n));
  assert.equal(await stored(backend), landed.map(decision));
  assert.equal(
    backend.injected.map((f) => f.append),
    failed,
  );
  return failed;
}

test('random failures are the same for the same seed, and differ for another', async () => {
  const first = await randomRun({ failRandomly: { probability: 0.3, seed: 42 } });
  assert.ok(first.length > 0 && first.length < 60, `${first.length} failed`);
  assert.equal(await randomRun({ failRandomly: { probability: 0.3, seed: 42 } }), first);
  assert.not.equal(await randomRun({ failRandomly: { probability: 0.3, seed: 43 } }), first);
  // delays draw from their own generator: they do not change which appends fail
  assert.equal(
    await randomRun({ failRandomly: { probability: 0.3, seed: 42 }, delay: { min: 0, max: 2, seed: 9 } }),
    first,
  );
  assert.equal(await randomRun({ failRandomly: { probability: 0, seed: 42 } }), []);
});

test('a random failure after the write stops the log as a planned one does', async () => {
  const backend = faultyMemory({ failRandomly: { probability: 1, seed: 1, when: 'after' } });
  const log = await backend.open();
  assert.is(injectedFault(await failure(log.append([decision(1)])))?.kind, 'after');
  assert.is(await code(log.append([decision(2)])), 'LEDGER_STOPPED');
  await log.close();
  assert.equal(await stored(backend), [decision(1)]);
});

test('delayed appends land in call order, whatever their delays', async () => {
  // the later an append is called, the sooner its delay is over
  const backend = faultyMemory({ delay: (n) => (10 - n) * 2 });
  const log = await backend.open();
  const records = Array.from({ length: 8 }, (_, n) => decision(n + 1));
  const settled: number[] = [];
  const results = await Promise.all(
    records.map((record, n) => log.append([record]).then((appended) => (settled.push(n), appended))),
  );
  assert.equal(
    results.map((r) => r.from),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  assert.equal(settled, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(await all(log), records);
  await log.close();

  // and through a ledger, with random delays, each append made while earlier ones wait
  const random = faultyMemory({ delay: { min: 0, max: 4, seed: 5 } });
  const ledger = await Ledger.open(random);
  const pending: Promise<void>[] = [];
  for (let n = 1; n <= 20; n++) {
    pending.push(ledger.append(decision(n)));
    if (n % 3 === 0) await nextTurn();
  }
  await Promise.all(pending);
  await ledger.close();
  assert.equal(
    await stored(random),
    Array.from({ length: 20 }, (_, n) => decision(n + 1)),
  );
});

/** Each inner backend the crash test runs on, with its cleanup. */
const inners: readonly [string, (body: (inner: LogBackend<Record>) => Promise<void>) => Promise<void>][] = [
  ['memory', (body) => body(memoryBackend({ codec: honchoCodec }))],
  ['jsonl', (body) => withHome((home) => body(jsonlBackend(home.path, { codec: honchoCodec })))],
];

for (const [name, withInner] of inners) {
  test(`a crash loses exactly the appends not yet acknowledged, and a reopen shows exactly the acknowledged (${name})`, () =>
    withInner(async (inner) => {
      // append 3 is held back; 4 to 6 have no delay but must wait their turn behind it
      const backend = faultyBackend(inner, { delay: (n) => (n === 3 ? 60_000 : 0) });
      const log = await backend.open();
      const records = Array.from({ length: 6 }, (_, n) => decision(n + 1));
      const calls = records.map((record) => log.append([record]));
      await calls[1];
      await backend.crash();

      const outcomes = await Promise.allSettled(calls);
      assert.equal(
        outcomes.map((o) => o.status),
        ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected', 'rejected'],
      );
      for (const [n, outcome] of outcomes.entries()) {
        if (outcome.status === 'fulfilled') continue;
        const fault = injectedFault(outcome.reason);
        assert.is(fault?.kind, 'crash');
        assert.is(fault?.append, n + 1);
        assert.is((outcome.reason as LedgerIoError).errno, 'ECANCELED');
      }
      assert.is(await code(log.append([decision(7)])), 'LEDGER_CLOSED');
      assert.is(await code(all(log)), 'LEDGER_CLOSED');

      const again = await backend.open();
      assert.is(again.head, 2);
      assert.equal(await all(again), records.slice(0, 2));
      // the backend works on after the crash (append 8: no delay)
      assert.equal(await again.append([decision(3)]), { from: 2, head: 3 });
      await again.close();
      assert.equal(backend.stats, {
        attempted: 8,
        acknowledged: 3,
        rejected: 5,
        pending: 0,
        failedBefore: 0,
        failedAfter: 0,
        lost: 4,
        crashes: 1,
      });
    }));
}

test('a crash under a ledger: the acknowledged records survive, the batch in flight is lost, later appends are refused', async () => {
  let holding = false;
  const backend = faultyMemory({ delay: () => (holding ? 60_000 : 0) });
  const ledger = await Ledger.open(backend);
  await ledger.append(decision(1));
  holding = true;
  const inFlight = [ledger.append(decision(2)), ledger.append(decision(3))];
  await nextTurn(); // the ledger has handed its batch to the log, where it waits
  await backend.crash();
  for (const lost of inFlight) assert.is(injectedFault(await failure(lost))?.kind, 'crash');
  assert.is(await code(ledger.append(decision(4))), 'LEDGER_CLOSED');
  assert.not.ok(await ledger.isDecided(turn('chat-1', 2)));
  await ledger.close();
  holding = false;

  const again = await Ledger.open(backend);
  assert.equal((await again.counts()).decided, 1);
  assert.ok(await again.isDecided(turn('chat-1', 1)));
  assert.not.ok(await again.isDecided(turn('chat-1', 2)));
  await again.close();
  assert.is(backend.stats.lost, 1); // one batch of two records
});

test('the counters and the list of injected faults say what happened', async () => {
  const backend = faultyMemory({
    failAppends: [
      { at: 2, when: 'before', code: 'EROFS' },
      { at: 4, when: 'after' },
    ],
  });
  const log = await backend.open();
  await log.append([decision(1)]);
  assert.is(((await failure(log.append([decision(2)]))) as LedgerIoError).errno, 'EROFS');
  await log.append([decision(3)]);
  await failure(log.append([decision(4)]));
  assert.is(await code(log.append([decision(5)])), 'LEDGER_STOPPED');
  await log.close();
  assert.is(await code(log.append([decision(6)])), 'LEDGER_CLOSED');
  assert.equal(backend.stats, {
    attempted: 6,
    acknowledged: 2,
    rejected: 4,
    pending: 0,
    failedBefore: 1,
    failedAfter: 1,
    lost: 0,
    crashes: 0,
  });
  assert.equal(
    backend.injected.map((f) => [f.append, f.kind, f.code]),
    [
      [2, 'before', 'EROFS'],
      [4, 'after', 'EIO'],
    ],
  );
  assert.equal(await stored(backend), [decision(1), decision(3), decision(4)]);
});

test('close lets the delayed appends already called land first', async () => {
  const backend = faultyMemory({ delay: 5 });
  const log = await backend.open();
  const calls = [log.append([decision(1)]), log.append([decision(2)])];
  await log.close();
  assert.equal(await Promise.all(calls), [
    { from: 0, head: 1 },
    { from: 1, head: 2 },
  ]);
  assert.equal(await stored(backend), [decision(1), decision(2)]);
});

test('a plan that makes no sense is refused at once', () => {
  const inner = memoryBackend({ codec: honchoCodec });
  for (const plan of [
    { failAppends: [{ at: 0, when: 'before' }] },
    {
      failAppends: [
        { at: 2, when: 'before' },
        { at: 2, when: 'after' },
      ],
    },
    { failAppendsAfter: -1 },
    { failRandomly: { probability: 1.5, seed: 1 } },
    { delay: -3 },
    { delay: { min: 5, max: 2, seed: 1 } },
  ] satisfies FaultPlan[]) {
    assert.throws(
      () => faultyBackend(inner, plan),
      (e: unknown) => e instanceof RangeError,
      JSON.stringify(plan),
    );
  }
});

test.run();
