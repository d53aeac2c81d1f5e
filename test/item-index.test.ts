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
