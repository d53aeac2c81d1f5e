/** The ledger part of the conformance suite, with the state in a LevelDB read model, on every backend. */
import { join } from 'node:path';
import { MemoryLevel } from 'memory-level';
import { suite as uvuSuite } from 'uvu';
import { honchoCodec, jsonlBackend, levelBackend, memoryBackend } from '../../lib/index.js';
import { Home } from '../support/ledger.js';
import { ledgerSuite } from './index.js';

for (const [name, make] of [
  ['jsonl', (home: Home) => jsonlBackend(home.path, { codec: honchoCodec })],
  ['level', (home: Home) => levelBackend(join(home.dir, 'ledger.level'), { codec: honchoCodec })],
  [
    'level on memory-level',
    () => levelBackend(new MemoryLevel({ keyEncoding: 'view', valueEncoding: 'view' }), { codec: honchoCodec }),
  ],
  ['memory', () => memoryBackend({ codec: honchoCodec })],
] as const) {
  let index = '';
  const test = uvuSuite(`conformance, the ledger: ${name}, with a read model`);
  ledgerSuite({
    test,
    name: `${name}, with a read model`,
    factory: () => {
      const home = new Home();
      index = join(home.dir, 'index');
      return { backend: make(home), cleanup: () => home.remove() };
    },
    options: () => ({ index, onNotice: () => undefined }),
  });
  test.run();
}

// The read model in a database the caller made (memory-level), as the LevelDB backend takes one.
for (const [name, make] of [
  ['jsonl', (home: Home) => jsonlBackend(home.path, { codec: honchoCodec })],
  ['memory', () => memoryBackend({ codec: honchoCodec })],
] as const) {
  let index = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
  const test = uvuSuite(`conformance, the ledger: ${name}, with a read model in memory-level`);
  ledgerSuite({
    test,
    name: `${name}, with a read model in memory-level`,
    factory: () => {
      const home = new Home();
      index = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' });
      const db = index;
      return {
        backend: make(home),
        cleanup: async () => {
          home.remove();
          await db.close();
        },
      };
    },
    options: () => ({ index, onNotice: () => undefined }),
  });
  test.run();
}
