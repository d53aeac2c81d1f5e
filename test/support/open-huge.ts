/**
 * A child process for the opener's bounded-memory test (`test/fuzz/opener.test.ts`): opens the
 * ledger at argv[2] (read-only when argv[3] is `read-only`) and prints, as one JSON line, what
 * the open gave and how much the process's peak resident memory grew during it (`VmHWM` of
 * /proc/self/status, after the imports).
 */
import { readFileSync } from 'node:fs';
import { Ledger } from '../../lib/index.js';

function peakBytes(): number {
  const found = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  if (found === null) throw new Error('no VmHWM in /proc/self/status');
  return Number(found[1]) * 1024;
}

const [path, mode] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: open-huge.js <ledger> [read-only]');
const before = peakBytes();
const ledger = await Ledger.open(path, { readOnly: mode === 'read-only' });
const after = peakBytes();
process.stdout.write(`${JSON.stringify({ size: ledger.size, repair: ledger.repair, counts: await ledger.counts(), peakGrowth: after - before })}\n`);
await ledger.close();
