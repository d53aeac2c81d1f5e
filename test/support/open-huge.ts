/**
 * A child process that opens the ledger at argv[2] (read-only when argv[3] is `read-only`) and
 * prints, as one JSON line, what the open gave: for the opener's bounded-memory test
 * (`test/fuzz/opener.test.ts`) the size, the repair, the counts and how much the process's peak
 * resident memory grew during the open (`VmHWM` of /proc/self/status, after the imports); for
 * the opens that must be refused (`test/crash/special-files.test.ts`, which also guards against
 * an open that never returns; lines longer than a line may hold, in `test/jsonl.test.ts`),
 * `{"refused": {code, message}, peakGrowth}`. A writable open that succeeds is closed without
 * appending anything.
 */
import { readFileSync } from 'node:fs';
import { isLedgerError, Ledger } from '../../lib/index.js';

function peakBytes(): number {
  const found = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  if (found === null) throw new Error('no VmHWM in /proc/self/status');
  return Number(found[1]) * 1024;
}

/** What a refused open says, on stdout. */
export interface Refused {
  readonly refused: { readonly code: string; readonly message: string };
  readonly peakGrowth: number;
}

const [path, mode] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: open-huge.js <ledger> [read-only]');
const before = peakBytes();
let ledger: Ledger;
try {
  ledger = await Ledger.open(path, { readOnly: mode === 'read-only' });
} catch (e) {
  if (!isLedgerError(e)) throw e;
  const refused: Refused = { refused: { code: e.code, message: e.message }, peakGrowth: peakBytes() - before };
  process.stdout.write(`${JSON.stringify(refused)}\n`);
  process.exit(0);
}
const after = peakBytes();
process.stdout.write(
  `${JSON.stringify({ size: ledger.size, repair: ledger.repaired, counts: await ledger.counts(), peakGrowth: after - before })}\n`,
);
await ledger.close();
