/**
 * A child process for the single-writer tests: opens the ledger at argv[2] for writing, says
 * `ready` on stdout, and holds it until killed.
 */
import { Ledger } from '../../lib/index.js';

const ledger = await Ledger.open(process.argv[2] as string);
process.stdout.write(`ready ${ledger.size}\n`);
setInterval(() => undefined, 1 << 30);
