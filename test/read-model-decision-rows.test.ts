/**
 * The items projection's decision rows (version 2): every kind of item and action, written as
 * its tuple and read back from its CBOR, is the decision it was, its objects' keys in a record's
 * order; a u64 turn stays exact.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type DecisionTuple, decisionOf, decisionTuple } from '../lib/honcho/read-model/decision-rows.js';
import type { Action, Item } from '../lib/index.js';
import { cbor, uncbor } from '../lib/projections/layout.js';

const items: Item[] = [
  { type: 'turn', session: 'chat-1', turn: 0 },
  { type: 'turn', session: 'web.2026_x', turn: 2 ** 40 },
  { type: 'turn', session: 's', turn: 0xffff_ffff_ffff_ffffn },
  { type: 'edit', id: 'doc-7', part: 0 },
  { type: 'edit', id: 'é', part: 0xffff_ffff },
];
const actions: Action[] = [
  { type: 'turn', workspace: 'trusted', speaker: "o'neil" },
  { type: 'conclude', workspace: 'untrusted', peer: 'sam', session: 'chat-1', text: 'likes tea 😀' },
  { type: 'unconclude', workspace: 'fleet', text: 'likes tea' },
  { type: 'fleet', session: 'chat-2', text: 'a note' },
  { type: 'retract', session: 'chat-3', text: '' },
  { type: 'skip', why: 'nothing to send' },
];

test('every kind of decision reads back from its row as it was written', () => {
  const decisions = items.flatMap((item) => actions.map((action) => ({ item, action })));
  const row = uncbor<DecisionTuple[]>(cbor(decisions.map(({ item, action }) => decisionTuple(item, action))));
  const back = row.map(decisionOf);
  assert.equal(back, decisions);
  back.forEach((decision, n) => {
    const written = decisions[n] as (typeof decisions)[number];
    assert.equal(Object.keys(decision.item), Object.keys(written.item), `item ${n}`);
    assert.equal(Object.keys(decision.action), Object.keys(written.action), `action ${n}`);
  });
  const huge = back[2 * actions.length]?.item;
  assert.is(huge?.type === 'turn' ? huge.turn : null, 0xffff_ffff_ffff_ffffn, 'a u64 turn, exact');
});

test('a decision row holds fields, not the maps of version 1', () => {
  const tuple = decisionTuple({ type: 'turn', session: 'chat-1', turn: 5 }, { type: 'skip', why: 'no' });
  assert.equal(tuple, [5, 'chat-1', 5, 'no']);
  assert.equal(decisionTuple({ type: 'edit', id: 'd', part: 1 }, { type: 'turn', workspace: 'fleet', speaker: 'x' }), [
    8,
    'd',
    1,
    2,
    'x',
  ]);
});

test.run();
