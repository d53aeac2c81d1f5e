/**
 * A writer process that appends through the Honcho `Ledger` (any target: a JSONL file, a
 * PostgreSQL URI), for the tests between real processes (`test/postgres/ledgers.test.ts`,
 * `test/cli-follow.test.ts`):
 *
 *     node ledger-writer.js <target> <writer> <mode> <count> <seed> [<pause-ms>]
 *
 * It opens the ledger, says `ready`, waits for a line on stdin (so that every writer starts
 * together), appends, and says `ack <n>` the moment the append of item n resolves (a
 * synchronous write to the pipe: a line the parent reads is an append that had resolved). Then
 * `done`, and it waits for its stdin to close.
 *
 * - `steady`: decides `turn <n> of session w<writer>` for n below `<count>`, one at a time,
 *   each awaited, `<pause-ms>` (default 0) apart. It rides out a server that goes away: a failed append says `retry <code>`,
 *   and the ledger is reopened (tried until it opens) and the item appended again unless the
 *   reopened ledger has it (the failed append may have landed).
 * - `decide`: decides `turn <n> of session shared` for every n below `<count>`, shared with the
 *   other writers, in an order of its own, 16 appends at a time (group commit, as fast as it
 *   can): `ack <n>` for one that landed, `refused <n>` for one another writer had decided.
 *
 * Each record's skip reason is `by w<writer>`, so that the parent tells whose it is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isLedgerError, Ledger } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { decided, skip, turn } from './ledger.js';

const [target, writer, mode, countText, seedText, pauseText = '0'] = process.argv.slice(2);
if (target === undefined || seedText === undefined)
  throw new Error('usage: ledger-writer.js <target> <writer> <mode> <count> <seed>');
const count = Number(countText);
const rng = new Random(Number(seedText));
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const mine = (session: string, n: number) => decided(turn(session, n), skip(`by w${writer}`));

/** Opens the ledger, trying again while it cannot (the server is restarting). */
async function open(): Promise<Ledger> {
  for (const start = Date.now(); ; ) {
    try {
      return await Ledger.open(target as string);
    } catch (e) {
      if (Date.now() - start > 60_000) throw e;
      await sleep(50);
    }
  }
}

process.stdin.once('end', () => process.exit(0));
let ledger = await open();
say('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

if (mode === 'steady') {
  const session = `w${writer}`;
  for (let n = 0; n < count; n++) {
    for (;;) {
      try {
        await ledger.append(mine(session, n));
        break;
      } catch (e) {
        if (!isLedgerError(e) || e.code === 'LEDGER_ALREADY_DECIDED') throw e;
        say(`retry ${e.code}`);
        await ledger.close().catch(() => undefined);
        ledger = await open();
        if (await ledger.isDecided(turn(session, n))) break;
      }
    }
    say(`ack ${n}`);
    await sleep(Number(pauseText));
  }
} else if (mode === 'decide') {
  const order = rng.permutation(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < order.length) {
        const n = order[next++] as number;
        try {
          await ledger.append(mine('shared', n));
          say(`ack ${n}`);
        } catch (e) {
          if (!isLedgerError(e, 'LEDGER_ALREADY_DECIDED')) throw e;
          say(`refused ${n}`);
        }
      }
    }),
  );
} else {
  throw new Error(`ledger-writer: no mode ${mode}`);
}
await ledger.close();
say('done');
