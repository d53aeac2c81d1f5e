/**
 * `drop <target> --yes`: removes a ledger (a JSONL file, a `level:` folder, a PostgreSQL log),
 * such as the log an interrupted copy into PostgreSQL left unfinished. What it removes, and
 * what it refuses to, is `lib/drop.ts`'s.
 *
 * @module
 */
import { lookToDrop } from '../../drop.js';
import { printableTarget } from '../../printable.js';
import { UsageError } from '../args.js';
import type { Command, Context } from '../context.js';
import { backendAt, NoLedgerError } from '../open.js';

/** `drop <target> [--yes]`: without `--yes`, says what it would remove and removes nothing (exit 2). */
async function drop({ args: [target = ''], switches, out }: Context): Promise<number> {
  backendAt(target); // a target that names no ledger is a usage error, before anything is looked at
  const shown = printableTarget(target);
  const found = await lookToDrop(target);
  if (found.state !== 'ledger') throw new NoLedgerError(shown, found.why, 'drop');
  if (!switches.has('yes'))
    throw new UsageError(`drop would remove ${found.what}; nothing was removed: add --yes to remove it`, 'drop', false);
  const removed = await found.remove();
  out.line(`${shown}: removed ${removed}`);
  await out.flush();
  return 0;
}

export const DROP: Command = {
  synopsis: '<ledger> --yes',
  summary: 'remove a ledger: a JSONL file, a level: folder, a PostgreSQL log and its records',
  help: [
    'Removes the ledger: a JSONL file, a level: folder (its LevelDB files, then the folder), or a',
    'PostgreSQL log (its records and its row, in one transaction). For a log that a copy or gen',
    'into PostgreSQL left unfinished (stopped, killed, its server lost), which every command',
    'refuses: drop it, then run the copy again. Without --yes it says what it would remove and',
    'removes nothing (exit 2). It refuses (exit 1) a ledger that is not there, one that a writer',
    'has open (a JSONL or LevelDB lock; a PostgreSQL writer), a link, a file whose first line is',
    'not a record, and a folder that holds anything but a LevelDB ledger: nothing is removed.',
  ],
  args: ['<ledger>'],
  flags: ['yes'],
  run: drop,
};
