import { honchoCodec, jsonlBackend } from '../../lib/index.js';
import { Home } from '../support/ledger.js';
import { suite } from './suite.js';

suite({
  name: 'jsonl',
  factory: () => {
    const home = new Home();
    return { backend: jsonlBackend(home.path, { codec: honchoCodec }), cleanup: () => home.remove() };
  },
});

suite({
  name: 'jsonl, read in small chunks',
  factory: () => {
    const home = new Home();
    return { backend: jsonlBackend(home.path, { codec: honchoCodec, chunkSize: 97 }), cleanup: () => home.remove() };
  },
});
