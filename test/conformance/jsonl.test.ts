/** The conformance suite on the JSONL backend: read in chunks as large as a line may be, and in chunks of 97 bytes. */
import { readFileSync, truncateSync } from 'node:fs';
import { suite as uvuSuite } from 'uvu';
import { honchoCodec, jsonlBackend } from '../../lib/index.js';
import { InjectingIO } from '../support/injecting-io.js';
import { Home } from '../support/ledger.js';
import { suite } from './index.js';

for (const [name, chunkSize] of [
  ['jsonl', undefined],
  ['jsonl, read in small chunks', 97],
] as const) {
  const test = uvuSuite(`conformance: ${name}`);
  suite({
    test,
    name,
    factory: () => {
      const home = new Home();
      const io = new InjectingIO();
      const options = chunkSize === undefined ? { codec: honchoCodec } : { codec: honchoCodec, chunkSize };
      return {
        backend: jsonlBackend(home.path, { ...options, io }),
        io,
        fresh: () => jsonlBackend(home.path, options),
        cleanup: () => home.remove(),
      };
    },
    // a failed fdatasync stops the log
    stop: ({ io }) => io.fail('datasync'),
    // the file cut after its first `head` lines, as by hand
    rewind: ({ backend }, head) => {
      const bytes = readFileSync(backend.name);
      let end = 0;
      for (let n = 0; n < head; n++) end = bytes.indexOf(10, end) + 1;
      truncateSync(backend.name, end);
    },
  });
  test.run();
}
