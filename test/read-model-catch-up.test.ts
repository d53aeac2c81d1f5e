/**
 * The read model's catch-up at open: the rows its records read are read from LevelDB at once
 * (one read of many keys), not a point read a record, and it answers as a replay in memory does,
 * a record that breaks the rules still refused at its line.
 */
import { writeFileSync } from 'node:fs';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../lib/honcho/synthetic.js';
import { answerDigests, differences, encodeRecord, isLedgerError, Ledger, type Record } from '../lib/index.js';
import { decided, turn, withHome } from './support/ledger.js';

const VIEW = { keyEncoding: 'view', valueEncoding: 'view' } as const;

/** A caller's database that counts its point reads and its reads of many keys. */
function countingDb(): { db: MemoryLevel<Uint8Array, Uint8Array>; reads: { point: number; many: number } } {
  const db = new MemoryLevel<Uint8Array, Uint8Array>(VIEW);
  const reads = { point: 0, many: 0 };
  const getSync = db.getSync.bind(db);
  const getMany = db.getMany.bind(db);
  db.getSync = ((...args: Parameters<typeof getSync>) => {
    reads.point++;
    return getSync(...args);
  }) as typeof db.getSync;
  db.getMany = ((...args: Parameters<typeof getMany>) => {
    reads.many++;
    return getMany(...args);
  }) as typeof db.getMany;
  return { db, reads };
}

const lines = (records: readonly Record[]): string => records.map((r) => `${encodeRecord(r)}\n`).join('');

const records = [...workload({ records: 6000, seed: 13 })];

test('a catch-up of 1,000 records reads the rows they need at once, and answers as a replay', async () => {
  await withHome(async (home) => {
    const { db, reads } = countingDb();
    try {
      writeFileSync(home.path, lines(records.slice(0, 5000)));
      const built = await Ledger.open(home.path, { index: db, waitForIndex: true, onNotice: () => undefined });
      await built.close();
      writeFileSync(home.path, lines(records));
      reads.point = 0;
      reads.many = 0;
      const caughtUp = await Ledger.open(home.path, { index: db, waitForIndex: true, onNotice: () => undefined });
      const opened = { ...reads };
      const fromIndex = await answerDigests(caughtUp);
      await caughtUp.close();
      // the open's own reads: the registry, each projection's checkpoint, version, mark and counts
      assert.ok(opened.point < 30, `${opened.point} point reads for a catch-up of 1,000 records`);
      assert.ok(opened.many >= 1 && opened.many <= 4, `${opened.many} reads of many keys`);
      const replay = await Ledger.open(home.path, { readOnly: true });
      const fresh = await answerDigests(replay);
      await replay.close();
      assert.equal(differences(fresh, fromIndex), []);
    } finally {
      await db.close();
    }
  });
});

test('a record of the catch-up that breaks the rules against a row read at once is damage at its line', async () => {
  await withHome(async (home) => {
    const { db } = countingDb();
    try {
      writeFileSync(home.path, lines(records.slice(0, 5000)));
      const built = await Ledger.open(home.path, { index: db, waitForIndex: true, onNotice: () => undefined });
      await built.close();
      // decided again: an item the rows stored as decided before the catch-up
      const again = records.find((r) => r.type === 'decided') as Record;
      writeFileSync(home.path, lines([...records.slice(0, 5000), decided(turn('fresh', 1)), again]));
      let caught: unknown = null;
      try {
        await (await Ledger.open(home.path, { index: db, waitForIndex: true, onNotice: () => undefined })).close();
      } catch (e) {
        caught = e;
      }
      assert.ok(isLedgerError(caught, 'LEDGER_DAMAGED'), String(caught));
      assert.is((caught as { line?: unknown }).line, 5002);
    } finally {
      await db.close();
    }
  });
});

test.run();
