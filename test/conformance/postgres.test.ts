/** The conformance suite on the PostgreSQL backend, a log of its own for each test, with and without a read model. */
import { join } from 'node:path';
import { suite as uvuSuite } from 'uvu';
import { postgresBackend } from '../../backends/postgres/index.js';
import { honchoCodec } from '../../lib/index.js';
import { Home } from '../support/ledger.js';
import { pgSubject } from '../support/pg-cluster.js';
import { ledgerSuite, suite } from './index.js';

const test = uvuSuite('conformance: postgres');
// the factory is asynchronous (it needs the server's address): a backend's manifest is known without one
const capabilities = postgresBackend('postgres://localhost/ledgerstore', { codec: honchoCodec }).capabilities;
// a log that went back is seen by a look at the head: often, so that the test need not wait
const timeouts = { heartbeatMs: 100 };
suite({
  test,
  name: 'postgres',
  factory: () => pgSubject({ timeouts }),
  capabilities,
  rewind: (subject, head) => subject.rewind(head),
});
test.run();

let index = '';
const withIndex = uvuSuite('conformance, the ledger: postgres, with a read model');
ledgerSuite({
  test: withIndex,
  name: 'postgres, with a read model',
  factory: async () => {
    const home = new Home();
    index = join(home.dir, 'index');
    const subject = await pgSubject({ timeouts });
    return {
      backend: subject.backend,
      cleanup: async () => {
        home.remove();
        await subject.cleanup();
      },
    };
  },
  options: () => ({ index, onNotice: () => undefined }),
  capabilities,
});
withIndex.run();
