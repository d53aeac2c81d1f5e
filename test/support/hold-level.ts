/**
 * A child process for the LevelDB tests, on the folder argv[3]:
 *
 * - `hold <folder>`: opens the ledger there for writing, says `ready <size>` on stdout, and holds
 *   it until killed;
 * - `append <folder> <n>`: appends batches of n records, one after another, saying
 *   `appended <head>` after each, until killed;
 * - `once <folder> <n>`: opens the log, appends one batch of n records, says `appended <head>`
 *   and closes it.
 */
import { levelBackend } from '../../backends/level/index.js';
import { honchoCodec, Ledger } from '../../lib/index.js';
import { decided, edit, skip } from './ledger.js';

const [mode, folder, size] = process.argv.slice(2);
if (folder === undefined) throw new Error('usage: hold-level.js hold <folder> | append|once <folder> <n>');
const backend = levelBackend(folder, { codec: honchoCodec });
if (mode === 'hold') {
  const ledger = await Ledger.open(backend);
  process.stdout.write(`ready ${ledger.size}\n`);
  setInterval(() => undefined, 1 << 30);
} else if (mode === 'once') {
  const log = await backend.open();
  const from = log.head;
  const records = Array.from({ length: Number(size) }, (_, part) => decided(edit('once', from + part)));
  const { head } = await log.append(records);
  process.stdout.write(`appended ${head}\n`);
  await log.close();
} else {
  const n = Number(size);
  const log = await backend.open();
  for (let batch = log.head / n; ; batch++) {
    // records of several sizes, so that batches straddle LevelDB's log blocks (32 KiB)
    const records = Array.from({ length: n }, (_, part) =>
      decided(edit(`batch-${batch}`, part), skip('x'.repeat(part % 200))),
    );
    const { head } = await log.append(records);
    process.stdout.write(`appended ${head}\n`);
  }
}
