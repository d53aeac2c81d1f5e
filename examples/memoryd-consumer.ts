/**
 * A memoryd-style sender on the Honcho ledger: decide what goes where, send the outbox to Honcho
 * (here a fake one that refuses some sends), record each outcome (`sent` with Honcho's ids, or
 * `failed`), stop part-way as a restart would, and go on after the restart from what the ledger
 * holds: every item decided once, sent at most once, and nothing sent twice.
 *
 * Three runs of "memoryd" share one ledger file; each opens it (reading it through, as memoryd
 * does at start), decides what is not decided yet, and sends what waits. The outbox is the only
 * queue: what a run did not send, the next one finds there.
 *
 * It imports the package by name, as another project would: `make test` type-checks and runs it
 * against the packed package (test/examples.test.ts); from a checkout, after `make build`,
 * `node dist/examples/memoryd-consumer.js`. It writes into a temporary folder and removes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Action, type Item, itemKey, Ledger, timeOf } from 'ledgerstore';

/** Honcho refusing a send: its HTTP status and a word for why. */
class HonchoError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
  ) {
    super(`Honcho answered ${status} (${kind})`);
    this.name = 'HonchoError';
  }
}

/**
 * A stand-in for Honcho: it takes an item's action and gives ids for what it made, refuses
 * every third call with a 503, and counts what it received per item, so that a send made twice
 * would show.
 */
class FakeHoncho {
  readonly received = new Map<string, number>();
  private calls = 0;

  async send(item: Item, action: Action): Promise<string[]> {
    if (++this.calls % 3 === 0) throw new HonchoError(503, 'unavailable');
    this.received.set(itemKey(item), (this.received.get(itemKey(item)) ?? 0) + 1);
    return action.type === 'turn' ? [`msg-${this.calls}a`, `msg-${this.calls}b`] : [`obj-${this.calls}`];
  }
}

const nameOf = (item: Item): string =>
  item.type === 'turn' ? `turn ${item.turn} of session ${item.session}` : `part ${item.part} of edit ${item.id}`;

/** What memoryd decides from its sessions and its journal, in order; a later run may bring more. */
function decisions(turns: number): { item: Item; action: Action }[] {
  const out: { item: Item; action: Action }[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const item: Item = { type: 'turn', session: 'chat-1', turn };
    out.push({
      item,
      action:
        turn === 2
          ? { type: 'skip', why: 'a greeting, nothing to remember' }
          : { type: 'turn', workspace: 'trusted', speaker: 'kyle' },
    });
  }
  out.push({
    item: { type: 'edit', id: '2026-09-28-0001', part: 0 },
    action: {
      type: 'conclude',
      workspace: 'trusted',
      peer: 'kyle',
      session: 'chat-1',
      text: 'Kyle takes his coffee black.',
    },
  });
  return out;
}

/** Decides, in order, each item of `turns` turns (and the edit) that is not decided yet. Gives how many it decided. */
async function decide(ledger: Ledger, turns: number): Promise<number> {
  let decided = 0;
  for (const { item, action } of decisions(turns)) {
    // Reading the ledger through at open is what keeps a restart from deciding an item again.
    if (await ledger.isDecided(item)) continue;
    await ledger.append({ type: 'decided', time: timeOf(new Date()), item, action });
    decided++;
  }
  return decided;
}

/** Sends what the outbox holds, oldest first, at most `budget` items, and records each outcome. */
async function sendOutbox(name: string, ledger: Ledger, honcho: FakeHoncho, budget: number): Promise<void> {
  let handled = 0;
  for (const { item, action } of await ledger.outbox()) {
    if (handled++ === budget) {
      console.log(`${name}: stops here, as a restart would`);
      return;
    }
    // The outcome is recorded only once Honcho answered, and the item leaves the outbox only
    // once the record is durable. (A crash between Honcho's answer and the record would send
    // the item again after the restart: the ledger cannot know what Honcho took.)
    try {
      const ids = await honcho.send(item, action);
      await ledger.append({ type: 'sent', time: timeOf(new Date()), item, ids });
      console.log(`${name}: sent ${nameOf(item)}: ${ids.join(', ')}`);
    } catch (e) {
      if (!(e instanceof HonchoError)) throw e;
      // A failed item is done with: it leaves the outbox, and is not sent again.
      await ledger.append({ type: 'failed', time: timeOf(new Date()), item, status: e.status, kind: e.kind });
      console.log(`${name}: failed ${nameOf(item)}: ${e.message}`);
    }
  }
}

/**
 * One run of memoryd: open the ledger, decide what is not decided yet, then send from the
 * outbox, at most `budget` items before this run stops (a restart, in the middle of the work).
 */
async function run(name: string, file: string, honcho: FakeHoncho, turns: number, budget: number): Promise<void> {
  const ledger = await Ledger.open(file);
  const decided = await decide(ledger, turns);
  console.log(`${name}: decided ${decided} new items; the outbox holds ${(await ledger.counts()).waiting}`);
  await sendOutbox(name, ledger, honcho, budget);
  console.log(`${name}: ${JSON.stringify(await ledger.counts())}`);
  await ledger.close();
}

/**
 * A run that finds nothing to send and waits for work: `waitForOutbox` resolves once an append
 * puts an item in the outbox (here a turn that finishes meanwhile), without polling.
 */
async function runWaiting(name: string, file: string, honcho: FakeHoncho, turns: number): Promise<void> {
  const ledger = await Ledger.open(file);
  console.log(`${name}: the outbox holds ${(await ledger.counts()).waiting}; waiting for work`);
  const work = ledger.waitForOutbox();
  console.log(`${name}: a new turn finished; decided ${await decide(ledger, turns)} new item`);
  await work;
  await sendOutbox(name, ledger, honcho, Infinity);
  console.log(`${name}: ${JSON.stringify(await ledger.counts())}`);
  await ledger.close();
}

const folder = mkdtempSync(join(tmpdir(), 'memoryd-'));
try {
  const file = join(folder, 'honcho.jsonl');
  const honcho = new FakeHoncho();
  await run('run 1', file, honcho, 5, 3);
  await run('run 2', file, honcho, 5, Infinity); // after the restart: the same decisions, none made twice
  await runWaiting('run 3', file, honcho, 6);

  const ledger = await Ledger.open(file, { readOnly: true });
  const twice = [...honcho.received].filter(([, times]) => times > 1);
  console.log(
    `Honcho received ${honcho.received.size} items, ${twice.length === 0 ? 'each once' : `${twice.length} more than once`}`,
  );
  const conclusion = await ledger.conclusion('trusted', 'Kyle takes his coffee black.');
  console.log(
    `the conclusion an undo would delete: ${conclusion === null ? 'none' : `${conclusion.id}, from ${nameOf(conclusion.item)}`}`,
  );
  await ledger.close();
} finally {
  rmSync(folder, { recursive: true, force: true });
}
