/**
 * A ledger's live consumers (`lib/honcho/live.ts`): where `follow()` starts, when it stops, and
 * what a consumer that falls behind costs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ledger, type Position, type Record } from '../lib/index.js';
import { decided, turn } from './support/ledger.js';

const records = (count: number, from = 0): Record[] =>
  Array.from({ length: count }, (_, n) => decided(turn('live', from + n)));

test('follow() refuses a from that is no position, as it is iterated', async () => {
  const ledger = await Ledger.open('memory:');
  await ledger.append(decided(turn('live', 0)));
  const refusal = async (from: number): Promise<unknown> => {
    try {
      for await (const entry of ledger.follow(from)) return `gave ${JSON.stringify(entry)}`;
    } catch (e) {
      return e;
    }
    return 'gave nothing';
  };
  for (const from of [-2, 1.5, Number.NaN]) {
    const refused = await refusal(from);
    assert.instance(refused, RangeError, String(refused));
    assert.match((refused as Error).message, `not ${from}`);
  }
  await ledger.close();
});

test('follow() stops in its backlog as soon as its signal aborts, not at the backlog’s end', async () => {
  const ledger = await Ledger.open('memory:');
  await Promise.all(records(50).map((r) => ledger.append(r)));
  const stop = new AbortController();
  const seen: Position[] = [];
  for await (const { position } of ledger.follow(0, stop.signal)) {
    seen.push(position);
    if (position === 2) stop.abort();
  }
  assert.equal(seen, [0, 1, 2]);
  await ledger.close();
});

test.run();
