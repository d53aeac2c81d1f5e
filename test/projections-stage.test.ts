/**
 * A generation's stage, row cache and row bytes as units: what a batch writes for rows inserted,
 * put and deleted within it, what the cache answers once batches are written, whole or a row at
 * a time, and the bytes of rows written through one scratch buffer into LevelDB.
 */
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyFilter, RowCache } from '../lib/projections/caches.js';
import { Database } from '../lib/projections/database.js';
import type { ProjectionDefinition, Rows } from '../lib/projections/definition.js';
import { submit } from '../lib/projections/feeder.js';
import { Generation } from '../lib/projections/generation.js';
import { cbor } from '../lib/projections/layout.js';
import { NO_ROOM, NOT_SIMPLE, writeCbor } from '../lib/projections/row-cbor.js';
import { Random } from '../lib/random.js';
import { sealedRow } from './support/index-db.js';
import { withHome } from './support/ledger.js';

type Change = (rows: Rows) => void;

/** A projection whose records are changes of its rows. */
const changes: ProjectionDefinition<Change> = {
  name: 'changes',
  version: 1,
  apply(records, rows) {
    for (const change of records) change(rows);
  },
  queries: () => ({}),
};

const VIEW = { keyEncoding: 'view', valueEncoding: 'view' } as const;

/** A generation in a database in memory, and the row keys its database holds. */
async function generation(): Promise<{ rows: Generation<Change>; keys: () => Promise<string[]> }> {
  const db = new MemoryLevel<Uint8Array, Uint8Array>(VIEW);
  await db.open();
  const database = new Database('memory', db, null, true);
  const entry = { id: 'changes.1', projection: 'changes', version: 1, db: null, role: 'serving' } as const;
  const rows = new Generation(entry, changes, database);
  const keys = async (): Promise<string[]> => {
    const found: string[] = [];
    for await (const key of db.keys()) {
      const text = Buffer.from(key).toString('utf8');
      if (text.startsWith('!changes.1!r')) found.push(text.slice('!changes.1!r'.length));
    }
    return found;
  };
  return { rows, keys };
}

const batch = (rows: Generation<Change>, ...records: Change[]): Promise<void> => {
  rows.apply(records, 0);
  return submit(rows.db, [rows], null, false, false);
};

test('a row inserted and deleted in one batch is not written; one put and deleted is', async () => {
  const { rows, keys } = await generation();
  await batch(rows, (r) => r.put('kept', 1));
  const deleted: string[] = [];
  const write = rows.db.batch.bind(rows.db);
  rows.db.batch = () => {
    const inner = write();
    return {
      ...inner,
      del: (key) => {
        deleted.push(Buffer.from(key).toString('utf8'));
        inner.del(key);
      },
    };
  };
  await batch(
    rows,
    (r) => r.insert('passing', 'w'),
    (r) => r.put('passing', 'x'),
    (r) => r.del('passing'),
    (r) => r.del('kept'),
  );
  const rowsDeleted = deleted.filter((key) => key.startsWith('!changes.1!r'));
  assert.equal(rowsDeleted, ['!changes.1!rkept'], 'only the row the rows held before the batch is deleted');
  assert.equal(await keys(), []);
  assert.is(await rows.reader.get('passing'), undefined);
  assert.is(await rows.reader.get('kept'), undefined);
});

test('a row deleted and inserted again in one batch reads back inserted, and is written', async () => {
  const { rows, keys } = await generation();
  await batch(
    rows,
    (r) => r.insert('top', 1),
    (r) => r.del('top'),
    (r) => r.insert('top', 2),
  );
  assert.is(await rows.reader.get('top'), 2);
  assert.equal(await keys(), ['top']);
});

test('a row the rows held, deleted, inserted and deleted again in one batch, is deleted: in this process and in the database', async () => {
  const { rows, keys } = await generation();
  await batch(rows, (r) => r.put('s0', 'A'));
  await batch(
    rows,
    (r) => r.del('s0'),
    (r) => r.insert('s0', 'B'),
    (r) => r.del('s0'),
  );
  assert.is(await rows.reader.get('s0'), undefined, 'this process reads it deleted');
  assert.equal(await keys(), [], 'the database holds no row');
});

test('the row cache answers a large batch taken in whole, and the one before it, until two more', () => {
  const cache = new RowCache<number>(8);
  const large = (from: number): Map<string, number> => new Map([0, 1, 2].map((n) => [`k${from + n}`, from + n]));
  cache.absorb(large(0));
  cache.absorb(large(10));
  assert.is(cache.get('k1'), 1);
  assert.is(cache.get('k12'), 12);
  cache.absorb(large(20));
  assert.is(cache.get('k1'), undefined);
  assert.is(cache.get('k12'), 12);
  assert.is(cache.get('k22'), 22);
});

test('the row cache copies a small batch in, the rows it holds kept beside it', () => {
  const cache = new RowCache<number>(64);
  cache.set('a', 1);
  cache.absorb(new Map([['b', 2]]));
  assert.is(cache.get('a'), 1);
  assert.is(cache.get('b'), 2);
});

test('rows written through the scratch buffer into LevelDB are each their own sealed bytes, a large one too', async () => {
  await withHome(async (home) => {
    const db = new ClassicLevel<Uint8Array, Uint8Array>(join(home.dir, 'rows'), VIEW);
    await db.open();
    const database = new Database('rows', db, null, true);
    const entry = { id: 'changes.1', projection: 'changes', version: 1, db: null, role: 'serving' } as const;
    const written: [string, unknown][] = [
      ['a', 'w'],
      ['large', 'x'.repeat(200_000)],
      ['sessión\n7', ['msg-1', 'msg-2']],
      ['b', 3],
    ];
    try {
      const rows = new Generation(entry, changes, database);
      await batch(
        rows,
        ...written.map(
          ([key, value]): Change =>
            (r) =>
              r.put(key, value),
        ),
      );
      await batch(rows, (r) => r.del('b'));
      for (const [key, value] of written.slice(0, 3)) {
        const rowKey = Buffer.from(`!changes.1!r${key}`, 'utf8');
        assert.equal(Buffer.from((await db.get(rowKey)) as Uint8Array), sealedRow(rowKey, value), key);
      }
      assert.is(await db.get(Buffer.from('!changes.1!rb')), undefined);
      // read back by rows that never saw them written: from LevelDB, checked
      const reread = new Generation(entry, changes, database);
      for (const [key, value] of written.slice(0, 3)) assert.equal(await reread.reader.get(key), value);
    } finally {
      await database.close();
    }
  });
});

test('the key filter knows every key it was given, and says yes of few others as it grows', () => {
  const filter = new KeyFilter();
  const keys = 400_000;
  for (let n = 0; n < keys; n++) filter.add(`it${n % 977}\n${n}`);
  for (let n = 0; n < keys; n++) assert.ok(filter.has(`it${n % 977}\n${n}`), `key ${n}`);
  let yes = 0;
  for (let n = 0; n < keys; n++) if (filter.has(`ie${n}:${n % 977}`)) yes++;
  // four filters (4,096, 32,768, 262,144 and 2,097,152 keys): false positives of each add up
  assert.is(filter.count, 4);
  assert.ok(yes / keys < 0.01, `${yes} of ${keys} keys never added said to be there`);
});

test('values written in place are the bytes cbor-x writes; any other value is left to cbor-x', () => {
  const random = new Random(7);
  const alphabet = ['a', 'Z', '-', '\n', 'é', 'ß', '€', '中', '😀', '\u007f', '\u0080', '\u07ff', '\u0800'];
  const text = (length: number): string =>
    Array.from({ length }, () => alphabet[random.below(alphabet.length)] as string).join('');
  const values: unknown[] = [
    ...[0, 1, 23, 24, 255, 256, 65_535, 65_536, 0xffff_ffff],
    ...[0, 1, 7, 8, 23, 24, 31, 32, 63, 64, 85, 86, 255, 256, 21_845, 21_846, 65_535, 65_536].map((n) => 'x'.repeat(n)),
    ...[1, 8, 9, 22, 23, 24, 63, 64, 100, 30_000].map(text),
    [],
    Array.from({ length: 300 }, (_, n) => n * 1000),
    [[3, 'sess', 12, 0, 'sam'], [8, 'edit', 4_000_000_000, 'why'], []],
  ];
  for (let n = 0; n < 200; n++) values.push(Array.from({ length: random.below(30) }, () => text(random.below(80))));
  const target = Buffer.alloc(1 << 20);
  for (const value of values) {
    const end = writeCbor(target, 3, target.length, value);
    assert.ok(end > 0, JSON.stringify(value).slice(0, 60));
    assert.equal(target.subarray(3, end), cbor(value), JSON.stringify(value).slice(0, 60));
  }
  for (const value of [-1, 1.5, 0x1_0000_0000, 10n, null, true, { a: 1 }, new Uint8Array(2), ['a', -1], [[{}]]])
    assert.is(writeCbor(target, 0, target.length, value), NOT_SIMPLE, String(value));
  assert.is(writeCbor(target, 0, 4, 'abc'), NO_ROOM);
  assert.is(writeCbor(target, 0, 20, ['abc', 'x'.repeat(10)]), NO_ROOM);
  assert.is(writeCbor(target, 0, 3, 70_000), NO_ROOM);
});

test.run();
