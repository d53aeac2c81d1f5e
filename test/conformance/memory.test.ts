/**
 * The conformance suite on the in-memory backend, and on the fault wrapper with an empty plan
 * (which must be transparent) around the JSONL backend and around the in-memory one; then what
 * the suite does not reach of the in-memory backend.
 */
import { suite as uvuSuite } from 'uvu';
import * as assert from 'uvu/assert';
import { faultyBackend } from '../../backends/faults.js';
import { memoryBackend } from '../../backends/memory.js';
import { honchoCodec, jsonlBackend, type Record } from '../../lib/index.js';
import { all, decided, Home, skip, TIME, turn } from '../support/ledger.js';
import { type Subject, suite } from './index.js';

/** Registers and runs the suite on the subjects `factory` makes. */
function conformance(name: string, factory: () => Subject): void {
  const test = uvuSuite(`conformance: ${name}`);
  suite({ test, name, factory });
  test.run();
}

conformance('memory', () => ({ backend: memoryBackend({ codec: honchoCodec }), cleanup: () => {} }));

conformance('faulty jsonl, empty plan', () => {
  const home = new Home();
  return {
    backend: faultyBackend(jsonlBackend(home.path, { codec: honchoCodec }), {}),
    fresh: () => jsonlBackend(home.path, { codec: honchoCodec }),
    cleanup: () => home.remove(),
  };
});

conformance('faulty memory, empty plan', () => ({
  backend: faultyBackend(memoryBackend({ codec: honchoCodec }), {}),
  cleanup: () => {},
}));

// Delays change when appends land, never what the log promises: every 7th append waits a
// millisecond, so that later ones queue behind it.
conformance('faulty memory, some appends delayed', () => ({
  backend: faultyBackend(memoryBackend({ codec: honchoCodec }), { delay: (n) => (n % 7 === 0 ? 1 : 0) }),
  cleanup: () => {},
}));

// What the suite does not reach: the in-memory backend's own promises.

const memory = uvuSuite('memory backend');

memory(
  'records are stored so that nobody can change them: not the caller who appended them, not a reader',
  async () => {
    const backend = memoryBackend({ codec: honchoCodec });
    const log = await backend.open();
    const mine = {
      type: 'decided',
      time: TIME,
      item: { type: 'turn', session: 'chat-1', turn: 1 },
      action: { type: 'skip', why: 'quiet' },
    };
    await log.append([mine as Record]);
    mine.item.turn = 99;
    mine.action.why = 'changed';
    const [read] = await all(log);
    assert.equal(read, decided(turn('chat-1', 1), skip('quiet')));
    assert.throws(
      () => {
        (read as { time: string }).time = 'now';
      },
      (e: unknown) => e instanceof TypeError,
    );
    assert.throws(
      () => {
        ((read as Record).item as { turn: number }).turn = 2;
      },
      (e: unknown) => e instanceof TypeError,
    );
    await log.close();
    assert.equal(await all(await backend.open({ readOnly: true })), [decided(turn('chat-1', 1), skip('quiet'))]);
  },
);

memory('a reader opened while a writer writes sees the log as it was when it opened', async () => {
  const backend = memoryBackend({ codec: honchoCodec });
  const writer = await backend.open();
  await writer.append([decided(turn('chat-1', 1))]);
  const reader = await backend.open({ readOnly: true });
  await writer.append([decided(turn('chat-1', 2))]);
  assert.is(reader.head, 1);
  assert.equal(await all(reader), [decided(turn('chat-1', 1))]);
  assert.is(writer.head, 2);
  await reader.close();
  await writer.close();
});

memory('each backend object is its own log', async () => {
  const one = memoryBackend({ codec: honchoCodec });
  const other = memoryBackend({ codec: honchoCodec });
  const log = await one.open();
  await log.append([decided(turn('chat-1', 1))]);
  const second = await other.open(); // not locked: another log
  assert.is(second.head, 0);
  await second.close();
  await log.close();
});

memory.run();
