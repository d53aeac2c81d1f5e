/**
 * A child process for the single-writer tests: opens the ledger at argv[2] for writing (with
 * the read model in argv[3], if given), says `ready` on stdout, and holds it until killed.
 */
import { Ledger } from '../../lib/index.js';

const index = process.argv[3];
const ledger = await Ledger.open(process.argv[2] as string, index === undefined ? {} : { index });
process.stdout.write(`ready ${ledger.size}\n`);
setInterval(() => undefined, 1 << 30);
