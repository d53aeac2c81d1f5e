/**
 * The items of a batch as the ledger forms it (`lib/honcho/batch-items.ts`): the latest number
 * added with an item is found again, by the item's value and not its object, among items whose
 * hashes meet, past the first tables' room, and nothing is found once the batch is cleared.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BatchItems } from '../lib/honcho/batch-items.js';
import { type Item, sameItem } from '../lib/honcho/record.js';
import { workload } from '../lib/honcho/synthetic.js';

/** The number the latest of `added` that is `item` came with, or -1: what a batch must say. */
function latestIn(added: readonly [Item, number][], item: Item): number {
  for (let n = added.length - 1; n >= 0; n--) {
    const [other, value] = added[n] as [Item, number];
    if (sameItem(other, item)) return value;
  }
  return -1;
}

/** Items of every kind, some the same as others by value (another object), some alike but for one field. */
function someItems(): Item[] {
  const items: Item[] = [];
  for (const record of workload({ records: 3000, seed: 5 })) items.push({ ...record.item });
  items.push(
    { type: 'turn', session: 's', turn: 2n ** 64n - 1n },
    { type: 'turn', session: 's', turn: 2n ** 63n },
    { type: 'turn', session: 's', turn: 0 },
    { type: 'edit', id: '', part: 0 },
    { type: 'edit', id: '', part: 1 },
    { type: 'edit', id: 's', part: 0 },
    { type: 'edit', id: 'é李🦊', part: 2 ** 32 - 1 },
  );
  return items;
}

test('the latest number of each item is found, by its value, across batches and past the first room', () => {
  const items = someItems();
  const batch = new BatchItems();
  // batches of several sizes, the last larger than the tables' first room (1,024)
  for (const size of [1, 2, 64, 1024, 2500]) {
    const added: [Item, number][] = [];
    for (let n = 0; n < size; n++) {
      const item = items[(n * 7) % items.length] as Item;
      const copy = { ...item }; // found by value, not by the object
      assert.is(batch.latest(copy), latestIn(added, copy), `batch of ${size}, record ${n}`);
      if (n % 3 !== 2) {
        batch.add(item, n);
        added.push([item, n]);
      }
    }
    for (const item of items) assert.is(batch.latest(item), latestIn(added, item), `batch of ${size}, after`);
    batch.clear();
    for (const item of items) assert.is(batch.latest(item), -1, 'nothing once cleared');
  }
});

test('items alike but for one field are told apart', () => {
  const batch = new BatchItems();
  const alike: Item[] = [
    { type: 'turn', session: 'abc', turn: 1 },
    { type: 'turn', session: 'abc', turn: 2 ** 32 + 1 }, // the same low 32 bits of the turn
    { type: 'turn', session: 'adc', turn: 1 }, // the same length, ends and middle but for one
    { type: 'turn', session: 'abc', turn: 1n + 2n ** 60n },
    { type: 'turn', session: 'abc', turn: 2n ** 61n },
    { type: 'edit', id: 'abc', part: 1 },
  ];
  alike.forEach((item, n) => batch.add(item, n));
  alike.forEach((item, n) =>
    assert.is(
      batch.latest({ ...item }),
      n,
      JSON.stringify(item, (_, v) => String(v)),
    ),
  );
  assert.is(batch.latest({ type: 'turn', session: 'abc', turn: 3 }), -1);
  batch.add({ type: 'turn', session: 'abc', turn: 1 }, 40);
  assert.is(batch.latest({ type: 'turn', session: 'abc', turn: 1 }), 40, 'the latest of two');
});

test.run();
