/** The conformance suite on the LevelDB backend: a folder (classic-level), and a memory-level database. */
import { join } from 'node:path';
import { MemoryLevel } from 'memory-level';
import { suite as uvuSuite } from 'uvu';
import { levelBackend } from '../../backends/level/index.js';
import { honchoCodec } from '../../lib/index.js';
import { Home } from '../support/ledger.js';
import { suite } from './index.js';

const onDisk = uvuSuite('conformance: level, on disk (classic-level)');
suite({
  test: onDisk,
  name: 'level, on disk (classic-level)',
  factory: () => {
    const home = new Home();
    const folder = join(home.dir, 'ledger');
    return {
      backend: levelBackend(folder, { codec: honchoCodec }),
      fresh: () => levelBackend(folder, { codec: honchoCodec }),
      cleanup: () => home.remove(),
    };
  },
});
onDisk.run();

const inMemory = uvuSuite('conformance: level, in memory (memory-level)');
suite({
  test: inMemory,
  name: 'level, in memory (memory-level)',
  factory: () => {
    // One database for the whole test: every reopen of the backend finds what was appended.
    const db = new MemoryLevel();
    return { backend: levelBackend(db, { codec: honchoCodec, name: 'memory-level' }), cleanup: () => db.close() };
  },
});
inMemory.run();
