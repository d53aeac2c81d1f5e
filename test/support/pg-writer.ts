/**
 * A writer process for the PostgreSQL race tests (`test/postgres/processes.test.ts`):
 *
 *     node pg-writer.js <uri> <writer> <mode> <count> <seed>
 *
 * It opens the log at `<uri>`, says `ready`, waits for a line on stdin (so that every writer
 * starts together), then appends as fast as it can, and says `ack <from> <head>` the moment an
 * append resolves (a synchronous write to the pipe: a line the parent reads is an append that
 * had resolved). Then `done`, and it waits for its stdin to close (or for SIGKILL).
 *
 * - `blind`: `<count>` batches of 1 to 8 records, without `expectedHead`. Record k of batch b is
 *   the decision of part k of edit `w<writer>-<b>`, skipped with the reason `of <size>`.
 * - `decide`: decides the items `turn <n> of session shared` for n below `<count>`, shared with
 *   the other writers: it reads what the log holds, takes up to 4 undecided items from among the
 *   first few, and appends their decisions expecting the head it read; on a conflict it reads
 *   what the others appended and tries again, until every item is decided. Says `conflicts <n>`
 *   before `done`.
 * - `big`: batches of `<count>` records, without end, for the parent to kill mid-batch.
 */

import { postgresBackend } from '../../backends/postgres/index.js';
import { ConflictError, honchoCodec, type Record, type Turn } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { decided, edit, skip, turn } from './ledger.js';

const [uri, writer, mode, countText, seedText] = process.argv.slice(2);
if (uri === undefined || seedText === undefined)
  throw new Error('usage: pg-writer.js <uri> <writer> <mode> <count> <seed>');
const count = Number(countText);
const rng = new Random(Number(seedText));
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

process.stdin.once('end', () => process.exit(0));
const log = await postgresBackend(uri, { codec: honchoCodec }).open();
say('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

const batchOf = (tag: string, size: number): Record[] =>
  Array.from({ length: size }, (_, k) => decided(edit(tag, k), skip(`of ${size}`)));

if (mode === 'blind') {
  for (let b = 0; b < count; b++) {
    const { from, head } = await log.append(batchOf(`w${writer}-${b}`, 1 + rng.below(8)));
    say(`ack ${from} ${head}`);
  }
} else if (mode === 'big') {
  for (let b = 0; ; b++) {
    const { from, head } = await log.append(batchOf(`w${writer}-${b}`, count));
    say(`ack ${from} ${head}`);
  }
} else if (mode === 'decide') {
  const taken = new Set<Turn>();
  let known = 0;
  let conflicts = 0;
  const catchUp = async (): Promise<void> => {
    for await (const record of log.read(known)) {
      known++;
      if (record.item.type === 'turn') taken.add(record.item.turn);
    }
  };
  await catchUp();
  for (;;) {
    const open: number[] = [];
    for (let n = 0; n < count && open.length < 8; n++) if (!taken.has(n)) open.push(n);
    if (open.length === 0) break;
    const chosen = [...new Set(Array.from({ length: 1 + rng.below(4) }, () => rng.pick(open)))];
    try {
      const { from, head } = await log.append(
        chosen.map((n) => decided(turn('shared', n), skip(`by w${writer}`))),
        { expectedHead: known },
      );
      say(`ack ${from} ${head}`);
      for (const n of chosen) taken.add(n);
      known = head;
    } catch (e) {
      if (!(e instanceof ConflictError)) throw e;
      conflicts++;
      await catchUp();
    }
  }
  say(`conflicts ${conflicts}`);
} else {
  throw new Error(`pg-writer: no mode ${mode}`);
}
say('done');
