/**
 * The compact state's index of items (`lib/honcho/item-index.ts`): every item added is found
 * again, by its object and by its name's bytes, whatever its name; and an index or a state made
 * room for from an estimate (`reserve`) answers as one grown from empty, whatever the estimate.
 */
import { writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonlBackend } from '../backends/jsonl.js';
import { readCanonical } from '../lib/honcho/canonical.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import { ItemIndex } from '../lib/honcho/item-index.js';
import { Projection } from '../lib/honcho/projection.js';
import type { Counts, Item, Workspace } from '../lib/honcho/record.js';
import { workload } from '../lib/honcho/synthetic.js';
import { encodeRecord, Ledger, type Record, type SizeSample } from '../lib/index.js';
import { conclude, decided, edit, failed, fleet, sent, skip, turn, unconclude, withHome } from './support/ledger.js';

/** The items of a generated workload's `decided` records, and a few names and turns it has none of. */
function someItems(records: number): Item[] {
  const items: Item[] = [];
  for (const record of workload({ records, seed: 3 })) if (record.type === 'decided') items.push(record.item);
  items.push(
    { type: 'turn', session: 'mika 🦊', turn: 2n ** 64n - 1n },
    { type: 'turn', session: 'mika 🦊', turn: 2n ** 53n },
    { type: 'edit', id: 'édge-3 李雷', part: 0 },
    { type: 'edit', id: '', part: 2 ** 32 - 1 },
    { type: 'edit', id: '\ufeff', part: 0 },
    { type: 'edit', id: '\ufeffa\ufeff', part: 1 },
  );
  return items;
}

/** `index` with `items` added, made room for `reserved` items first, or halfway (`later`). */
function indexOf(items: readonly Item[], reserved: number | null, later = false): ItemIndex {
  const index = new ItemIndex();
  if (reserved !== null && !later) index.reserve(reserved);
  items.forEach((item, n) => {
    if (reserved !== null && later && n === items.length >> 1) index.reserve(reserved);
    index.add(item);
  });
  return index;
}

test('an index made room for answers as one grown from empty, whatever the estimate', () => {
  const items = someItems(6000);
  const grown = indexOf(items, null);
  const absent: Item[] = [
    { type: 'turn', session: 'mika 🦊', turn: 2n ** 64n - 2n },
    { type: 'edit', id: 'édge-3 李雷', part: 1 },
    { type: 'turn', session: 'never-seen', turn: 1 },
  ];
  const estimates: [string, number, boolean][] = [
    ['far too small', 1, false],
    ['about right', items.length, false],
    ['far too large', 200 * items.length, false],
    ['made halfway', 4 * items.length, true],
  ];
  for (const [what, reserved, later] of estimates) {
    const index = indexOf(items, reserved, later);
    assert.is(index.size, grown.size, what);
    items.forEach((item, seq) => {
      assert.is(index.find(item), seq, `${what}: the item of seq ${seq}`);
      assert.equal(index.item(seq), grown.item(seq), what);
      assert.equal(index.item(seq), item, `${what}: the item given back as it was added`);
    });
    for (const item of absent) assert.is(index.find(item), -1, what);
  }
});

/** A projection of the lines of `file` as the ledger's open reads them, made room for `reserved` records first (or not). */
async function replayed(file: string, reserved: number | null): Promise<Projection> {
  const projection = new Projection();
  if (reserved !== null) projection.reserve(reserved);
  const log = await jsonlBackend(file, { codec: honchoCodec }).open({
    readOnly: true,
    replayLine: (line) => projection.replayLine(line),
  });
  await log.close();
  return projection;
}

/** Every answer of a projection about some items and conclusions' texts. */
interface Answers {
  readonly records: number;
  readonly counts: Counts;
  readonly outbox: unknown;
  readonly pages: unknown;
  readonly states: unknown;
  readonly conclusions: readonly (Item | null)[];
}

function answers(projection: Projection, items: readonly Item[], texts: readonly [Workspace, string][]): Answers {
  return {
    records: projection.records,
    counts: projection.counts(),
    outbox: projection.outbox(),
    pages: [projection.outboxPage(7), projection.outboxPage(7, 40)],
    states: items.map((item) => [projection.stateOf(item), projection.isDecided(item), projection.sentPosition(item)]),
    conclusions: texts.map(([workspace, text]) => projection.concluded(workspace, text)),
  };
}

test('a state made room for answers as one grown from empty, whatever the estimate', async () => {
  await withHome(async (home) => {
    const records = [...workload({ records: 8000, seed: 6 })];
    writeFileSync(home.path, records.map((r) => `${encodeRecord(r)}\n`).join(''));
    const items = someItems(8000);
    const texts: [Workspace, string][] = [];
    for (const r of records)
      if (r.type === 'decided' && (r.action.type === 'conclude' || r.action.type === 'unconclude'))
        texts.push([r.action.workspace, r.action.text]);
    const grown = answers(await replayed(home.path, null), items, texts);
    assert.ok(grown.counts.sent > 1000 && grown.counts.waiting > 0, 'the workload sends, and leaves some waiting');
    assert.ok(
      grown.conclusions.some((conclusion) => conclusion !== null),
      'some conclusion stands',
    );
    for (const reserved of [1, records.length, 500 * records.length])
      assert.equal(answers(await replayed(home.path, reserved), items, texts), grown, `made room for ${reserved}`);
  });
});

test('the JSONL log tells the open the bytes its read-through reads, and what its first run held, once that run is taken', async () => {
  await withHome(async (home) => {
    for (const [records, chunkSize] of [
      [50, undefined],
      [3000, 64 << 10],
    ] as const) {
      const lines = [...workload({ records, seed: 2 })].map((r) => `${encodeRecord(r)}\n`);
      const text = lines.join('');
      writeFileSync(home.path, text);
      const told: [number, SizeSample, number][] = [];
      let lineCount = 0;
      const log = await jsonlBackend(home.path, { codec: honchoCodec, chunkSize }).open({
        readOnly: true,
        sizeHint: (bytes, first) => told.push([bytes, first, lineCount]),
        replayLine: () => {
          lineCount++;
        },
      });
      await log.close();
      assert.is(told.length, 1, 'told once');
      const [bytes, first, takenBefore] = told[0] as [number, SizeSample, number];
      assert.is(bytes, Buffer.byteLength(text));
      assert.is(first.records, takenBefore, 'the records of the run taken before it');
      assert.is(first.bytes, Buffer.byteLength(lines.slice(0, first.records).join('')), 'and their bytes');
      if (chunkSize === undefined) assert.is(first.records, records, 'a small file is one run');
      else assert.ok(first.records > 0 && first.records < records, `the first run of several: ${first.records}`);
    }
  });
});

test('a log of long lines is sized from the records its first run held, not from a guess of the bytes a line takes', async () => {
  await withHome(async (home) => {
    const long = (n: number): Record => decided(turn('chat-1', n + 1), skip('x'.repeat(20_000)));
    const lines = Array.from({ length: 400 }, (_, n) => `${encodeRecord(long(n))}\n`).join('');
    writeFileSync(home.path, lines);
    const reserved: number[] = [];
    const reserve = Projection.prototype.reserve;
    Projection.prototype.reserve = function (this: Projection, records: number) {
      reserved.push(records);
      reserve.call(this, records);
    };
    try {
      const ledger = await Ledger.open(home.path, { readOnly: true });
      assert.is(ledger.size, 400);
      await ledger.close();
    } finally {
      Projection.prototype.reserve = reserve;
    }
    assert.equal(reserved, [400], 'room for the 400 records it holds, where 160 bytes a line would say 50,000');
  });
});

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

test('the items of one name with neighbouring numbers, which share a group of slots, are each found again', () => {
  const index = new ItemIndex();
  const numbers: number[] = [];
  // runs of neighbours across group borders, at the ends of the u32 and f64 ranges too
  for (const base of [0, 1000, 2 ** 32 - 9, 2 ** 53 - 20])
    for (let k = 0; k < 17; k++) if (base + k <= Number.MAX_SAFE_INTEGER) numbers.push(base + k);
  const added: Item[] = [];
  for (const number of numbers) {
    added.push({ type: 'turn', session: 'busy', turn: number }, { type: 'edit', id: 'busy', part: number });
  }
  // many more than the table's first length, so that it is rehashed with groups in it
  for (let turn = 0; turn < 5000; turn++) added.push({ type: 'turn', session: 'long', turn: 10_000 + turn });
  added.forEach((item, seq) => assert.is(index.add(item), seq));
  added.forEach((item, seq) => assert.is(index.find(item), seq, JSON.stringify(item)));
  for (const number of [17, 1017, 2 ** 32 + 8, 2 ** 53 - 3])
    assert.is(index.find({ type: 'turn', session: 'busy', turn: number }), -1, `turn ${number} was never added`);
  assert.is(index.find({ type: 'turn', session: 'long', turn: 9_999 }), -1);
  assert.is(index.find({ type: 'turn', session: 'long', turn: 15_000 }), -1);
});

test('a conclusion is found by its text, whatever escapes its lines write it with', async () => {
  await withHome(async (home) => {
    const quoted = 'say "hi" to zoë';
    const plain = 'zoë likes tea';
    const controls = 'a/b\n李\t\\ \b\f\r';
    // the same texts as other lines may write them: other escapes, which a canonical line may hold
    const otherEscapes = (line: string): string =>
      line.replace('say \\"hi\\" to zoë', 'say \\u0022hi\\u0022 to zo\\u00eb').replace('zoë likes', 'zo\\u00eb likes');
    const lines = [
      encodeRecord(decided(edit('c', 0), conclude('trusted', quoted))),
      encodeRecord(sent(edit('c', 0), ['id-0'])),
      otherEscapes(encodeRecord(decided(edit('c', 1), conclude('trusted', quoted)))),
      encodeRecord(sent(edit('c', 1), ['id-1'])),
      encodeRecord(decided(edit('p', 0), conclude('trusted', plain))),
      encodeRecord(decided(edit('p', 1), conclude('untrusted', plain))),
      encodeRecord(sent(edit('p', 0), ['id-p0'])),
      encodeRecord(sent(edit('p', 1), ['id-p1'])),
      otherEscapes(encodeRecord(decided(edit('u', 0), unconclude('trusted', quoted)))),
      otherEscapes(encodeRecord(decided(edit('u', 1), unconclude('trusted', plain)))),
      encodeRecord(sent(edit('u', 0), ['u-0'])),
      encodeRecord(sent(edit('u', 1), ['u-1'])),
      encodeRecord(decided(edit('k', 0), conclude('fleet', controls))),
      encodeRecord(sent(edit('k', 0), ['id-k0'])),
      encodeRecord(decided(edit('k', 1), conclude('fleet', controls))),
      encodeRecord(sent(edit('k', 1), ['id-k1'])),
      // every escape there is, in place of what the line wrote: undoes the second
      encodeRecord(decided(edit('k', 2), unconclude('fleet', controls))).replace(
        /a\/b.*\\r/,
        'a\\/b\\u000a\\u674e\\u0009\\u005c \\b\\f\\r',
      ),
      encodeRecord(sent(edit('k', 2), ['u-k2'])),
    ];
    const changed = lines.filter((line) => line.includes('\\u00'));
    assert.is(changed.length, 4, 'four lines written with other escapes');
    for (const line of changed) {
      const bytes = Buffer.from(line);
      assert.ok(readCanonical(bytes, 0, bytes.length) !== null, `read the fast way: ${line}`);
    }
    writeFileSync(home.path, lines.map((line) => `${line}\n`).join(''));
    const ledger = await Ledger.open(home.path, { readOnly: true });
    try {
      assert.equal(await ledger.conclusion('trusted', quoted), { item: edit('c', 0), id: 'id-0' }, 'one undone of two');
      assert.is(await ledger.conclusion('trusted', plain), null, 'undone');
      assert.equal(
        await ledger.conclusion('untrusted', plain),
        { item: edit('p', 1), id: 'id-p1' },
        'another workspace',
      );
      assert.is(await ledger.conclusion('fleet', plain), null);
      assert.equal(await ledger.conclusion('fleet', controls), { item: edit('k', 0), id: 'id-k0' });
      assert.is(
        await ledger.conclusion('trusted', 'say \\u0022hi\\u0022 to zo\\u00eb'),
        null,
        'the escapes are not the text',
      );
    } finally {
      await ledger.close();
    }
  });
});

test.run();
