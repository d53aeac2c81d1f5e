/**
 * The Honcho ledger's edges, on the backend: `await using` closes it; every call on a closed
 * ledger is refused with `LEDGER_CLOSED`, and `close` again does nothing; every query refuses an
 * argument it cannot take with `LEDGER_BAD_ARGUMENT`, naming it, and changes nothing.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { type Item, isLedgerError, Ledger, type LedgerOptions, type Workspace } from '../../lib/index.js';
import { code, type Run, type Subject } from './common.js';
import { decided, sent, turn } from './records.js';

/** Every call of a ledger, by name, as a promise (an iterable's first step, a sync call's throw). */
const CALLS: readonly [string, (ledger: Ledger) => Promise<unknown>][] = [
  ['append', (l) => l.append(decided(turn('closed', 9)))],
  ['catchUp', (l) => l.catchUp()],
  ['senderLease', (l) => l.senderLease()],
  ['stateOf', (l) => l.stateOf(turn('closed', 1))],
  ['isDecided', (l) => l.isDecided(turn('closed', 1))],
  ['outbox', (l) => l.outbox()],
  ['outboxPage', (l) => l.outboxPage(10)],
  ['sentIds', (l) => l.sentIds(turn('closed', 1))],
  ['conclusion', (l) => l.conclusion('trusted', 'a text')],
  ['counts', (l) => l.counts()],
  ['decisions', (l) => first(l.decisions())],
  ['records', (l) => first(l.records())],
  ['follow', (l) => first(l.follow())],
  ['waitForOutbox', (l) => l.waitForOutbox()],
  ['whenReady', (l) => l.whenReady()],
  ['projections', async (l) => l.projections()],
];

/** The first step of an iteration. */
async function first(items: AsyncIterable<unknown>): Promise<unknown> {
  for await (const item of items) return item;
  return undefined;
}

/** Queries given what they cannot take, from JavaScript (or past a cast), and the argument each must name. */
const BAD: readonly [string, string, (ledger: Ledger) => Promise<unknown>][] = [
  ['isDecided(null)', 'item', (l) => l.isDecided(null as unknown as Item)],
  ["isDecided({ type: 'turn' })", 'item', (l) => l.isDecided({ type: 'turn' } as unknown as Item)],
  [
    'isDecided of an item with a field no item has',
    'item',
    (l) => l.isDecided({ ...turn('a', 1), at: 2 } as unknown as Item),
  ],
  ['sentIds({})', 'item', (l) => l.sentIds({} as unknown as Item)],
  ["stateOf({ type: 'edit', id: 'x' })", 'item', (l) => l.stateOf({ type: 'edit', id: 'x' } as unknown as Item)],
  ["conclusion('nowhere', text)", 'workspace', (l) => l.conclusion('nowhere' as Workspace, 'a text')],
  ["conclusion('trusted', 5)", 'text', (l) => l.conclusion('trusted', 5 as unknown as string)],
  ['outboxPage(0)', 'limit', (l) => l.outboxPage(0)],
  ["outboxPage(1, 'x')", 'after', (l) => l.outboxPage(1, 'x' as unknown as number)],
  ['records(-1)', 'from', (l) => first(l.records(-1))],
  ['follow(1.5)', 'from', (l) => first(l.follow(1.5))],
  ['waitForOutbox(signal: {})', 'signal', (l) => l.waitForOutbox({} as AbortSignal)],
  ["whenReady('none')", 'name', (l) => l.whenReady('none')],
];

export function ledgerEdgeTests<S extends Subject>({ test, withSubject }: Run<S>, options?: () => LedgerOptions): void {
  test(
    'await using closes the ledger as its scope ends: its log is free for the next writer',
    withSubject(async ({ backend }) => {
      let held: Ledger;
      {
        await using ledger = await Ledger.open(backend, { ...options?.() });
        await ledger.append(decided(turn('using', 1)));
        held = ledger;
      }
      assert.equal(await code(held.counts()), 'LEDGER_CLOSED');
      await held[Symbol.asyncDispose](); // again: nothing
      await using again = await Ledger.open(backend, { ...options?.() });
      assert.equal(again.size, 1);
      assert.equal(await again.isDecided(turn('using', 1)), true);
    }),
  );

  test(
    'every call on a closed ledger is refused with LEDGER_CLOSED, and close again does nothing',
    withSubject(async ({ backend }) => {
      const ledger = await Ledger.open(backend, { ...options?.() });
      await ledger.append(decided(turn('closed', 1)));
      await ledger.close();
      for (const [name, call] of CALLS) assert.equal(await code(call(ledger)), 'LEDGER_CLOSED', name);
      await ledger.close();
      await ledger[Symbol.asyncDispose]();
    }),
  );

  test(
    'every query refuses an argument it cannot take with LEDGER_BAD_ARGUMENT, naming it, and changes nothing',
    withSubject(async ({ backend }) => {
      const ledger = await Ledger.open(backend, { ...options?.() });
      await ledger.append(decided(turn('a', 1)));
      await ledger.append(sent(turn('a', 1)));
      const counts = await ledger.counts();
      for (const [name, argument, call] of BAD) {
        const refused = await call(ledger).then(
          () => assert.fail(`${name} answered`),
          (e: unknown) => e,
        );
        assert.ok(isLedgerError(refused, 'LEDGER_BAD_ARGUMENT'), `${name}: ${String(refused)}`);
        assert.equal((refused as { argument?: unknown }).argument, argument, name);
        assert.match(refused.message, new RegExp(`\\b${argument}\\b`), name);
      }
      // a workspace with no conclusion is memoryd's None, not a refusal
      assert.equal(await ledger.conclusion('fleet', 'never concluded'), null);
      assert.deepEqual(await ledger.counts(), counts);
      assert.equal(ledger.size, 2);
      await ledger.close();
    }),
  );
}
