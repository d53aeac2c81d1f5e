/**
 * A memoryd-style worker process for the tests between real processes
 * (`test/postgres/ledgers.test.ts`): it decides items and, while it holds the ledger's sender
 * lease, sends what is waiting to a (fake) Honcho and records `sent` or `failed`.
 *
 *     node honcho-worker.js <target> <worker> <items> <honcho-port> <seed>
 *
 * It opens the ledger, says `ready`, waits for a line on stdin, then at once:
 *
 * - decides every item `turn <n> of session work` for n below `<items>`, in an order of its
 *   own, 8 at a time (every fifth a skip); another worker's decision is refused, and that is
 *   the point;
 * - takes the sender lease when it can (`senderLease()`, tried every 20 ms while another holds
 *   it), and while it holds it sends the outbox a page at a time: a POST of the item to
 *   `http://127.0.0.1:<honcho-port>/send` for each, looking at the lease before each; a 200's
 *   ids become its `sent` record, any other answer its `failed` record. It gives the lease up
 *   after 5 sends, so that the others take turns.
 *
 * A `sent` or `failed` the ledger refuses would be an item sent twice: it says `twice <n>`.
 * It says `done` once every item is decided and none waits, then waits for its stdin to close.
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Item, isLedgerError, Ledger } from '../../lib/index.js';
import { Random } from '../../lib/random.js';
import { decided, failed, sent, skip, turn, turnTo } from './ledger.js';

const [target, worker, itemsText, portText, seedText] = process.argv.slice(2);
if (target === undefined || seedText === undefined)
  throw new Error('usage: honcho-worker.js <target> <worker> <items> <honcho-port> <seed>');
const items = Number(itemsText);
const rng = new Random(Number(seedText));
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const SENDS_PER_LEASE = 5;

/** What the fake Honcho answers for `item`: its status and the ids it gave. */
function send(item: Item): Promise<{ status: number; ids: string[] }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ item, worker });
    const call = request(
      {
        host: '127.0.0.1',
        port: Number(portText),
        path: '/send',
        method: 'POST',
        headers: { 'content-length': body.length },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            ids: response.statusCode === 200 ? (JSON.parse(text) as string[]) : [],
          }),
        );
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

process.stdin.once('end', () => process.exit(0));
const ledger = await Ledger.open(target);
say('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));

async function decideAll(): Promise<void> {
  const order = rng.permutation(items);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < order.length) {
        const n = order[next++] as number;
        const action = n % 5 === 0 ? skip(`by w${worker}`) : turnTo('trusted', `w${worker}`);
        await ledger.append(decided(turn('work', n), action)).catch((e: unknown) => {
          if (!isLedgerError(e, 'LEDGER_ALREADY_DECIDED')) throw e;
        });
      }
    }),
  );
}

/** Whether every item is decided and none waits (what every worker's state says once it caught up). */
async function finished(): Promise<boolean> {
  await ledger.catchUp();
  const { decided: all, waiting } = await ledger.counts();
  return all === items && waiting === 0;
}

async function sendAll(): Promise<void> {
  while (!(await finished())) {
    const lease = await ledger.senderLease();
    if (lease === null) {
      await sleep(20);
      continue;
    }
    let sends = 0;
    while (sends < SENDS_PER_LEASE && !lease.signal.aborted) {
      const { decisions } = await ledger.outboxPage(4);
      if (decisions.length === 0) {
        if (await finished()) break;
        // what the others decide comes in by the log's watch
        await Promise.race([ledger.waitForOutbox(lease.signal).catch(() => undefined), sleep(200)]);
        continue;
      }
      for (const { item } of decisions) {
        if (lease.signal.aborted || sends >= SENDS_PER_LEASE) break;
        const answer = await send(item);
        const record = answer.status === 200 ? sent(item, answer.ids) : failed(item, answer.status, 'server');
        try {
          await ledger.append(record);
        } catch (e) {
          if (!isLedgerError(e, 'LEDGER_NOT_WAITING')) throw e;
          say(`twice ${item.type === 'turn' ? item.turn : -1}`);
        }
        sends++;
      }
    }
    await lease.release();
    await sleep(50); // the others poll every 20 ms: their turn
  }
}

await Promise.all([decideAll(), sendAll()]);
await ledger.close();
say('done');
