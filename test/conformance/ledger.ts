/**
 * The Honcho ledger on the backend: its rules refuse alike on every backend, and it answers every
 * query as a replay in memory does, for a workload of thousands of records appended one by one
 * and together (group commit), and again after a reopen.
 *
 * @module
 */
import * as assert from 'node:assert/strict';
import { Projection } from '../../lib/honcho/projection.js';
import { MemoryState } from '../../lib/honcho/state.js';
import { workload } from '../../lib/honcho/synthetic.js';
import { type Item, Ledger, type LedgerOptions, type Record, type Workspace } from '../../lib/index.js';
import { code, type Run, type Subject } from './common.js';
import { conclude, decided, failed, sent, turn, turnTo } from './records.js';

/**
 * Whether the suite runs at its full size: `LEDGERSTORE_TORTURE` above 1, as `make torture`
 * sets it. Read here, not from the project's test support, which the package does not ship.
 */
const torture = (): boolean => Number(process.env.LEDGERSTORE_TORTURE ?? '1') > 1;

/** The queries memoryd asks, as the Ledger and the state in memory both answer them. */
interface Queries {
  counts(): unknown;
  outbox(): unknown;
  decisions(): Iterable<unknown> | AsyncIterable<unknown>;
  sentIds(item: Item): unknown;
  conclusion(workspace: Workspace, text: string): unknown;
}

/** Every answer about the items and conclusions of `records`. */
async function answers(records: readonly Record[], q: Queries): Promise<unknown> {
  const decisions: unknown[] = [];
  for await (const decision of q.decisions()) decisions.push(decision);
  // each item and each conclusion asked once: an item's records all ask the same question
  const items = new Map<string, Item>();
  const asked = new Map<string, [Workspace, string]>();
  for (const r of records) {
    items.set(
      JSON.stringify(r.item, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
      r.item,
    );
    if (r.type === 'decided' && 'workspace' in r.action && 'text' in r.action)
      asked.set(`${r.action.workspace}\n${r.action.text}`, [r.action.workspace, r.action.text]);
  }
  const sentIds: unknown[] = [];
  for (const item of items.values()) sentIds.push(await q.sentIds(item));
  const conclusions: unknown[] = [];
  for (const [workspace, text] of asked.values()) conclusions.push(await q.conclusion(workspace, text));
  return { counts: await q.counts(), outbox: await q.outbox(), decisions, sentIds, conclusions };
}

export function ledgerTests<S extends Subject>({ test, withSubject }: Run<S>, options?: () => LedgerOptions): void {
  test(
    'the ledger refuses what breaks the rules, on this backend as on any',
    withSubject(async ({ backend }) => {
      const ledger = await Ledger.open(backend, { ...options?.() });
      await ledger.append(decided(turn('a', 1)));
      assert.equal(await code(ledger.append(decided(turn('a', 1)))), 'LEDGER_ALREADY_DECIDED');
      assert.equal(await code(ledger.append(sent(turn('a', 2)))), 'LEDGER_NOT_WAITING');
      await ledger.append(sent(turn('a', 1)));
      assert.equal(await code(ledger.append(sent(turn('a', 1)))), 'LEDGER_NOT_WAITING');
      assert.equal(ledger.size, 2);
      await ledger.close();
    }),
  );

  test(
    'a turn only a bigint holds is kept exactly: appended, replayed, in every answer and in the log',
    withSubject(async ({ backend }) => {
      const top = turn('big', 2n ** 64n - 1n);
      const above = turn('big', 2n ** 53n + 1n);
      const edge = turn('big', 2n ** 53n);
      const safe = turn('big', 2 ** 53 - 1);
      const records = [
        decided(top, conclude('trusted', 'the last u64')),
        decided(above, conclude('untrusted', 'one past a double')),
        decided(edge),
        decided(safe),
        sent(top, ['h-top']),
        failed(edge, 503, 'unavailable'),
      ];
      const answersAbout = async (ledger: Ledger): Promise<unknown> => {
        const decisions: unknown[] = [];
        for await (const decision of ledger.decisions()) decisions.push(decision);
        return {
          counts: await ledger.counts(),
          outbox: await ledger.outbox(),
          page: await ledger.outboxPage(1),
          conclusion: await ledger.conclusion('trusted', 'the last u64'),
          sentIds: await ledger.sentIds(top),
          states: await Promise.all([top, above, edge, safe].map((item) => ledger.stateOf(item))),
          neighbours: await Promise.all(
            [2n ** 64n - 2n, 2n ** 53n + 2n, 2 ** 53 - 2].map((n) => ledger.isDecided(turn('big', n))),
          ),
          decisions,
        };
      };
      const expected = {
        counts: { decided: 4, sent: 1, waiting: 2, failed: 1, skipped: 0 },
        outbox: [
          { item: above, action: conclude('untrusted', 'one past a double') },
          { item: safe, action: turnTo() },
        ],
        page: { decisions: [{ item: above, action: conclude('untrusted', 'one past a double') }], next: 1 },
        conclusion: { item: top, id: 'h-top' },
        sentIds: ['h-top'],
        states: ['sent', 'waiting', 'failed', 'waiting'],
        neighbours: [false, false, false],
        decisions: records.filter((r) => r.type === 'decided').map((r) => ({ item: r.item, action: r.action })),
      };
      const ledger = await Ledger.open(backend, { ...options?.() });
      for (const record of records) await ledger.append(record);
      assert.equal(await code(ledger.append(decided(above))), 'LEDGER_ALREADY_DECIDED');
      assert.equal(await code(ledger.append(sent(turn('big', 2n ** 53n + 2n)))), 'LEDGER_NOT_WAITING');
      assert.deepEqual(await answersAbout(ledger), expected);
      await ledger.close();
      const again = await Ledger.open(backend, { ...options?.(), readOnly: true });
      assert.deepEqual(await answersAbout(again), expected, 'replayed');
      const read: Record[] = [];
      for await (const record of again.records()) read.push(record);
      assert.deepEqual(read, records, 'the log holds each turn exactly, in its one form');
      await again.close();
    }),
  );

  test(
    'the ledger answers every query as a replay in memory does, for a workload of thousands of records',
    withSubject(async ({ backend }) => {
      // make test: 2,500 records, 250 of them appended one by one (each waits for its own fsync:
      // enough to cross the backends' batch and page sizes); make torture: 5,000, 2,500 one by one
      const total = torture() ? 5000 : 2500;
      const oneByOne = torture() ? 2500 : 250;
      const generated = [...workload({ records: total, seed: 11 })];
      const projection = new Projection();
      for (const record of generated) projection.apply(record);
      // what a projection leaves in the log, it finds in the records themselves
      const reference = new MemoryState(projection, {
        name: 'the workload',
        async *read(from = 0) {
          yield* generated.slice(from);
        },
      });
      const expected = await answers(generated, reference);
      const ledger = await Ledger.open(backend, { ...options?.() });
      // half one by one, half at once, so that group commit takes part
      for (const record of generated.slice(0, oneByOne)) await ledger.append(record);
      await Promise.all(generated.slice(oneByOne).map((record) => ledger.append(record)));
      assert.deepEqual(await answers(generated, ledger), expected);
      await ledger.close();
      const again = await Ledger.open(backend, { ...options?.(), readOnly: true });
      assert.deepEqual(await answers(generated, again), expected);
      const read: Record[] = [];
      for await (const record of again.records()) read.push(record);
      assert.deepEqual(read, generated);
      await again.close();
    }),
  );
}
