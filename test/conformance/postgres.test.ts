/** The conformance suite on the PostgreSQL backend, a log of its own for each test, with and without a read model. */
import { join } from 'node:path';
import { Home } from '../support/ledger.js';
import { pgSubject } from '../support/pg-cluster.js';
import { ledgerSuite, suite } from './suite.js';

suite({ name: 'postgres', factory: () => pgSubject() });

let index = '';
ledgerSuite({
  name: 'postgres, with a read model',
  factory: async () => {
    const home = new Home();
    index = join(home.dir, 'index');
    const subject = await pgSubject();
    return {
      backend: subject.backend,
      cleanup: async () => {
        home.remove();
        await subject.cleanup();
      },
    };
  },
  options: () => ({ index, onNotice: () => undefined }),
});
