/**
 * A child process for the projection tests: opens the ledger at argv[2] with the read model in
 * argv[3] and the gated projection of `turns-projection.ts` (its build runs in a worker thread,
 * held until the gate `LEDGERSTORE_TEST_GATE` names exists), says `open <pid>` on stdout once the
 * open has returned, then `ready` once every projection is, and holds the ledger until killed.
 */
import { Ledger } from '../../lib/index.js';
import { gatedTurns } from './turns-projection.js';

const ledger = await Ledger.open(process.argv[2] as string, {
  index: process.argv[3] as string,
  projections: [gatedTurns],
  backgroundFrom: 1000,
  onNotice: () => undefined,
});
process.stdout.write(`open ${process.pid}\n`);
await ledger.whenReady();
process.stdout.write('ready\n');
setInterval(() => undefined, 1 << 30);
