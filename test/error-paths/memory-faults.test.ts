/**
 * The error paths of the in-memory backend and of the fault wrapper: a log closed under a read or
 * before `resumePoint`, and a fault plan whose delay function gives no delay.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { faultyBackend } from '../../backends/faults.js';
import { memoryBackend } from '../../backends/memory.js';
import { type EventLog, honchoCodec, isLedgerError, type Record } from '../../lib/index.js';
import { decided, failure, turn } from '../support/ledger.js';

const decision = (n: number): Record => decided(turn('chat-1', n));

/** Reads `log` through, closing it once the first record is in hand; the records read, and how the read ended. */
async function closeWhileReading(log: EventLog<Record>): Promise<{ read: Record[]; error: unknown }> {
  const read: Record[] = [];
  const error = await failure(
    (async () => {
      for await (const record of log.read()) {
        read.push(record);
        if (read.length === 1) await log.close();
      }
    })(),
  );
  return { read, error };
}

test('memory: a read in progress when the log is closed ends with LEDGER_CLOSED after the record in hand', async () => {
  const backend = memoryBackend({ codec: honchoCodec, name: 'mem' });
  const log = await backend.open();
  await log.append([decision(1), decision(2), decision(3)]);
  const { read, error } = await closeWhileReading(log);
  assert.equal(read, [decision(1)]);
  assert.ok(isLedgerError(error, 'LEDGER_CLOSED'), String(error));
  assert.is((error as Error).message, 'mem: the ledger is closed');
  // the records are the backend's: a reopen has them all
  const again = await backend.open({ readOnly: true });
  assert.is(again.head, 3);
  await again.close();
});

test('memory: resumePoint on a closed log is refused with LEDGER_CLOSED', async () => {
  const backend = memoryBackend({ codec: honchoCodec, name: 'mem' });
  const log = await backend.open();
  await log.append([decision(1)]);
  const point = await log.resumePoint();
  await log.close();
  const error = await failure(log.resumePoint());
  assert.ok(isLedgerError(error, 'LEDGER_CLOSED'), String(error));
  assert.is((error as Error).message, 'mem: the ledger is closed');
  // the point taken before the close still holds
  const seen: number[] = [];
  const resumed = await backend.open({ resume: point, replay: (_, position) => void seen.push(position) });
  assert.equal(seen, []);
  assert.is(resumed.head, 1);
  await resumed.close();
});

test('faults: resumePoint on a closed log is refused with LEDGER_CLOSED, before it reaches the inner log', async () => {
  const backend = faultyBackend(memoryBackend({ codec: honchoCodec, name: 'mem' }));
  const log = await backend.open();
  await log.append([decision(1)]);
  await log.close();
  const error = await failure(log.resumePoint());
  assert.ok(isLedgerError(error, 'LEDGER_CLOSED'), String(error));
  assert.is((error as Error).message, 'mem: the ledger is closed');
  assert.equal(backend.stats, {
    attempted: 1,
    acknowledged: 1,
    rejected: 0,
    pending: 0,
    failedBefore: 0,
    failedAfter: 0,
    lost: 0,
    crashes: 0,
  });
});

test('faults: a delay function that gives no number of milliseconds rejects that append with a RangeError, and nothing is written', async () => {
  const inner = memoryBackend({ codec: honchoCodec, name: 'mem' });
  const backend = faultyBackend(inner, { delay: (append) => (append === 2 ? -5 : 0) });
  const log = await backend.open();
  assert.equal(await log.append([decision(1)]), { from: 0, head: 1 });
  const error = await failure(log.append([decision(2)]));
  assert.instance(error, RangeError);
  assert.is((error as Error).message, 'fault plan: delay for append 2 must be a number of milliseconds, not -5');
  assert.is(log.head, 1);
  // counted as attempted and rejected, never pending: close does not wait for it
  assert.equal(backend.stats, {
    attempted: 2,
    acknowledged: 1,
    rejected: 1,
    pending: 0,
    failedBefore: 0,
    failedAfter: 0,
    lost: 0,
    crashes: 0,
  });
  assert.equal(backend.injected, []);
  // the log goes on: append 3 gets a delay of 0
  assert.equal(await log.append([decision(3)]), { from: 1, head: 2 });
  await log.close();
  const reader = await inner.open({ readOnly: true });
  const stored: Record[] = [];
  for await (const record of reader.read()) stored.push(record);
  assert.equal(stored, [decision(1), decision(3)]);
  await reader.close();
});

test.run();
