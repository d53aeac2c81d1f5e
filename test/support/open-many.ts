/**
 * A child process that opens and closes the ledger at argv[2] argv[3] times, and prints, as one
 * JSON line, how much its resident memory (`rss`) and the memory of its array buffers
 * (`arrayBuffers`) grew over those opens: for the test that many opens of a small ledger stay
 * small (`test/open-memory.test.ts`). One open and close runs first, untaken, so that the
 * modules' and the first open's own costs are not counted. With `--expose-gc`, a collection runs
 * before each measure.
 */
import { Ledger } from '../../lib/index.js';

const [target, times] = process.argv.slice(2);
if (target === undefined || times === undefined) throw new Error('usage: open-many.js <target> <times>');
const collect = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);

const openClose = async (): Promise<void> => {
  const ledger = await Ledger.open(target);
  await ledger.close();
};

await openClose();
collect();
const before = process.memoryUsage();
for (let n = 0; n < Number(times); n++) await openClose();
collect();
const after = process.memoryUsage();
process.stdout.write(
  `${JSON.stringify({ rss: after.rss - before.rss, arrayBuffers: after.arrayBuffers - before.arrayBuffers })}\n`,
);
