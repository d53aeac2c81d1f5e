/**
 * The compact state's index of items (`lib/honcho/item-index.ts`): every item added is found
 * again, by its object and by its name's bytes, whatever its name.
 */
import { writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ItemIndex } from '../lib/honcho/item-index.js';
import { encodeRecord, Ledger } from '../lib/index.js';
import { decided, edit, failed, fleet, withHome } from './support/ledger.js';

test('an item whose name is empty is found again, by its object and by its bytes', () => {
  const items = new ItemIndex();
  const seq = items.add({ type: 'edit', id: '', part: 0 });
  assert.is(items.find({ type: 'edit', id: '', part: 0 }), seq);
  assert.is(items.find({ type: 'edit', id: '', part: 1 }), -1);
  assert.is(items.names.findBytes(Buffer.alloc(0), 0, 0), items.names.find(''));
  assert.is.not(items.names.find(''), -1);
});

test('turns above 2^53-1 are kept exactly beside the small ones: each found again, none taken for another', () => {
  const items = new ItemIndex();
  const turns = [2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n, 2n ** 64n - 2n, 9007199254740991, 0, 1];
  const seqs = turns.map((turn) => items.add({ type: 'turn', session: 's', turn }));
  assert.equal(seqs, [0, 1, 2, 3, 4, 5, 6]);
  turns.forEach((turn, n) => {
    assert.is(items.find({ type: 'turn', session: 's', turn }), n, String(turn));
    assert.equal(items.item(n), { type: 'turn', session: 's', turn }, `turn ${turn} given back in its one form`);
    assert.is(items.find({ type: 'turn', session: 't', turn }), -1, 'another session');
    assert.is(items.find({ type: 'edit', id: 's', part: Number(turn) % 2 ** 32 }), -1, 'an edit');
  });
  assert.is(items.find({ type: 'turn', session: 's', turn: 2n ** 53n + 2n }), -1, 'a big turn never added');
  assert.is(items.find({ type: 'turn', session: 's', turn: 1n }), 6, 'a small turn given as a bigint is the number');
  assert.is(items.size, 7);
});

test('a ledger read through finds again the item with an empty id that a line decided', async () => {
  await withHome(async (home) => {
    const item = edit('', 0);
    writeFileSync(
      home.path,
      [decided(item, fleet('text', 'A')), failed(item, null, '')].map((r) => `${encodeRecord(r)}\n`).join(''),
    );
    const ledger = await Ledger.open(home.path, { readOnly: true });
    assert.equal(await ledger.counts(), { decided: 1, sent: 0, waiting: 0, failed: 1, skipped: 0 });
    await ledger.close();
  });
});

test.run();
