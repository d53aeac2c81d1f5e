import { join } from 'node:path';
import { MemoryLevel } from 'memory-level';
import { levelBackend } from '../../backends/level.js';
import { honchoCodec } from '../../lib/index.js';
import { Home } from '../support/ledger.js';
import { suite } from './suite.js';

suite({
  name: 'level, on disk (classic-level)',
  factory: () => {
    const home = new Home();
    return { backend: levelBackend(join(home.dir, 'ledger'), { codec: honchoCodec }), cleanup: () => home.remove() };
  },
});

suite({
  name: 'level, in memory (memory-level)',
  factory: () => {
    // One database for the whole test: every reopen of the backend finds what was appended.
    const db = new MemoryLevel();
    return { backend: levelBackend(db, { codec: honchoCodec, name: 'memory-level' }), cleanup: () => db.close() };
  },
});
