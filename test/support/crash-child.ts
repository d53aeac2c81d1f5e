/**
 * The child process of the process-kill harness (test/crash/kill.test.ts), killed with SIGKILL
 * at a random moment by its parent:
 *
 *     node crash-child.js <target> <seed> <records> <appenders> <limit> [<index>]
 *
 * Loads, then waits for a line on stdin (`go`): the parent starts the next trial's child while
 * it checks the last one, so that Node's start-up is not on the harness's critical path. Then it
 * opens the ledger at `<target>` (a JSONL path or `level:<folder>`; with `<index>`, keeping its
 * read model in that folder), which holds the first
 * records of `workload({ records, seed })` (what earlier children and the parent appended), says
 * `ready <size>` on stdout, then appends the next `<limit>` records of the workload (or its rest)
 * from `<appenders>` concurrent callers, none awaiting another: each takes the next record and
 * awaits its own append, so appends made in the same tick share a write and a sync (group
 * commit), in call order, which is workload order. The moment an append resolves it says `ack <index>` (the record's index
 * in the workload), with a synchronous write to the pipe: a line the parent reads is an append
 * that had resolved. When its records are done it says `done` and waits to be killed. It exits
 * when its stdin closes, so that no child outlives a parent that died.
 */

import { workload } from '../../lib/honcho/synthetic.js';
import { Ledger } from '../../lib/index.js';

const [target, seedText, recordsText, appendersText, limitText, indexFolder] = process.argv.slice(2);
if (target === undefined || limitText === undefined)
  throw new Error('usage: crash-child.js <target> <seed> <records> <appenders> <limit> [<index>]');
const seed = Number(seedText);
const total = Number(recordsText);
const appenders = Number(appendersText);
const limit = Number(limitText);

// The parent's end of stdin closes when it is done with this child, or dies: go with it.
process.stdin.once('end', () => process.exit(0));
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const ledger = await Ledger.open(
  target,
  indexFolder === undefined ? {} : { index: indexFolder, onNotice: () => undefined },
);
const start = ledger.size;
const records = workload({ records: total, seed });
for (let skipped = 0; skipped < start; skipped++) records.next();
process.stdout.write(`ready ${start}\n`);

let next = start;
const end = start + limit;
async function appender(): Promise<void> {
  while (next < end) {
    const taken = records.next();
    if (taken.done === true) return;
    const index = next++;
    await ledger.append(taken.value);
    process.stdout.write(`ack ${index}\n`);
  }
}
await Promise.all(Array.from({ length: appenders }, appender));
process.stdout.write('done\n');
// and waits for SIGKILL, or for stdin to close
