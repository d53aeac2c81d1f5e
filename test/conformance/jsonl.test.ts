import { honchoCodec, jsonlBackend } from '../../lib/index.js';
import { InjectingIO } from '../support/injecting-io.js';
import { Home } from '../support/ledger.js';
import { suite } from './suite.js';

suite({
  name: 'jsonl',
  factory: () => {
    const home = new Home();
    const io = new InjectingIO();
    return { backend: jsonlBackend(home.path, { codec: honchoCodec, io }), io, cleanup: () => home.remove() };
  },
  // a failed fdatasync stops the log
  stop: ({ io }) => io.fail('datasync'),
});

suite({
  name: 'jsonl, read in small chunks',
  factory: () => {
    const home = new Home();
    return { backend: jsonlBackend(home.path, { codec: honchoCodec, chunkSize: 97 }), cleanup: () => home.remove() };
  },
});
