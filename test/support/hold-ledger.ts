/**
 * A child process for the single-writer and replaced-file tests: opens the ledger at argv[2] for
 * writing (with the read model in argv[3], if given), says `ready <size>` on stdout, and holds it
 * until killed.
 *
 * Each line on stdin `append <session> <from> <count>` makes it append the `decided` records of
 * turns `from`, `from + 1`, ... of `session`, one after another, each awaited, and answer each
 * on stdout the moment it settles: `ack <turn>`, or `refused <turn> <code> <message>`. It stops
 * after `count` appends, or after the third refusal, and says `done`.
 */
import { createInterface } from 'node:readline';
import { isLedgerError, Ledger } from '../../lib/index.js';

const index = process.argv[3];
const ledger = await Ledger.open(process.argv[2] as string, index === undefined ? {} : { index });
process.stdout.write(`ready ${ledger.size}\n`);
setInterval(() => undefined, 1 << 30);

/** Refusals after which a run of appends gives up: the ledger has stopped. */
const GIVE_UP = 3;

async function appendTurns(session: string, from: number, count: number): Promise<void> {
  let refused = 0;
  for (let turn = from; turn < from + count && refused < GIVE_UP; turn++) {
    try {
      await ledger.append({
        type: 'decided',
        time: '2026-09-28T10:00:00.000Z',
        item: { type: 'turn', session, turn },
        action: { type: 'skip', why: 'held' },
      });
      process.stdout.write(`ack ${turn}\n`);
    } catch (e) {
      if (!isLedgerError(e)) throw e;
      refused++;
      process.stdout.write(`refused ${turn} ${e.code} ${e.message}\n`);
    }
  }
  process.stdout.write('done\n');
}

// one command at a time, in order
let queue: Promise<void> = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (command) => {
  const [op, session, from, count] = command.split(' ');
  if (op !== 'append' || session === undefined) throw new Error(`unknown command: ${command}`);
  queue = queue.then(() => appendTurns(session, Number(from), Number(count)));
});
