/**
 * The LevelDB read-through from the folder's files (`backends/level-read.ts`) held to LevelDB's
 * iterator: for folders in many shapes (records in the write-ahead log only, compacted into
 * tables, in several levels, keys written again or deleted, in one table or in two, a key that
 * is not a record's, damaged values and blocks), a read-through from the files gives the records,
 * the state and the damage texts that the iterator's read of every value gives (the codec
 * without its value scan).
 */

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode as cborEncode } from 'cbor-x';
import type { ClassicLevel } from 'classic-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { levelBackend } from '../backends/level.js';
import { RecordFiles } from '../backends/level-read.js';
import { encodeRecord } from '../backends/level-values.js';
import { workload } from '../lib/honcho/synthetic.js';
import { honchoCodec, Ledger, type Record } from '../lib/index.js';
import { inspectFolder } from '../lib/level-folder.js';
import type { RecordCodec } from '../lib/log.js';
import { withHome } from './support/ledger.js';
import { answers } from './support/ledger-answers.js';
import { folderOf, metaKey, recordKey, sealed, tamper, VIEW, write } from './support/level-db.js';

/** The codec without its value scan: every value read through LevelDB's iterator and decoded alone. */
const iteratorCodec: RecordCodec<Record> = { ...honchoCodec, valueScan: undefined };

const records = [...workload({ records: 9_000, seed: 21 })];

/** What a read-only open of the folder gives with `codec`: the records replayed, the ledger's answers, or the damage's text. */
async function readThrough(folder: string, codec: RecordCodec<Record>): Promise<unknown> {
  const replayed: [number, Record][] = [];
  let opened: Awaited<ReturnType<ReturnType<typeof levelBackend<Record>>['open']>>;
  try {
    opened = await levelBackend(folder, { codec, name: 'lv' }).open({
      readOnly: true,
      replay: (record, position) => {
        replayed.push([position, record]);
      },
    });
  } catch (e) {
    return { refused: (e as Error).message, replayed: replayed.length };
  }
  await opened.close();
  const ledger = await Ledger.open(levelBackend(folder, { codec, name: 'lv' }), { readOnly: true }).catch(
    (e: unknown) => e as Error,
  );
  if (ledger instanceof Error) return { replayed, ledgerRefused: ledger.message };
  try {
    return {
      replayed,
      answers: await answers(
        ledger,
        records.slice(0, replayed.length).map((r) => r.item),
      ),
    };
  } finally {
    await ledger.close();
  }
}

/** The folder's database written directly, as one write-ahead log, then opened once more so that LevelDB folds it into one table. */
async function direct(folder: string, change: (db: ClassicLevel<Uint8Array, Uint8Array>) => Promise<void>) {
  await tamper(folder, change, true);
  await tamper(folder, async () => undefined);
}

const putAll = async (db: ClassicLevel<Uint8Array, Uint8Array>, from: number, to: number): Promise<void> => {
  await db.open();
  const batch = db.batch();
  if (from === 0) batch.put(metaKey(), cborEncode({ format: 'ledgerstore/level', version: 2 }), VIEW);
  for (let n = from; n < to; n++) batch.put(recordKey(n), sealed(n, encodeRecord(records[n])), VIEW);
  await batch.write();
};

const compact = (folder: string): Promise<void> =>
  tamper(folder, (db) => db.compactRange(Uint8Array.of(0), Uint8Array.of(0xff), VIEW));

/** A shape of folder: how it is made, and whether the files can give its records (no record key in two of them). */
interface Shape {
  readonly what: string;
  readonly make: (folder: string) => Promise<void>;
  readonly fromFiles: boolean;
}

const SHAPES: readonly Shape[] = [
  { what: 'records in the write-ahead log only', fromFiles: true, make: (f) => write(f, records.slice(0, 300)) },
  {
    what: 'compacted into tables',
    fromFiles: true,
    make: async (f) => {
      await write(f, records.slice(0, 6_000));
      await compact(f);
    },
  },
  {
    what: 'in several levels and the write-ahead log',
    fromFiles: true,
    make: async (f) => {
      await write(f, records.slice(0, 3_000));
      await compact(f);
      await write(f, records.slice(3_000, 6_000)); // folded into a table of level 0 by the next open
      await write(f, records.slice(6_000, 9_000));
    },
  },
  {
    what: 'a key written twice in one table (its older entry after it)',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 400);
        await db.put(recordKey(100), sealed(100, encodeRecord(records[100])), VIEW);
      }),
  },
  {
    what: 'a key written again with another record, in one table',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 400);
        await db.put(recordKey(399), sealed(399, encodeRecord(records[5]) as Uint8Array), VIEW);
      }),
  },
  {
    what: 'a key deleted in one table',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 400);
        await db.del(recordKey(200), VIEW);
      }),
  },
  {
    what: 'the last key deleted in one table',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 400);
        await db.del(recordKey(399), VIEW);
      }),
  },
  {
    what: 'a key written again in the write-ahead log, over a table',
    fromFiles: false,
    make: async (f) => {
      await write(f, records.slice(0, 2_000));
      await compact(f);
      await tamper(f, (db) => db.put(recordKey(1_500), sealed(1_500, encodeRecord(records[1_500])), VIEW));
    },
  },
  {
    what: 'a key deleted in the write-ahead log, over a table',
    fromFiles: false,
    make: async (f) => {
      await write(f, records.slice(0, 2_000));
      await compact(f);
      await tamper(f, (db) => db.del(recordKey(700), VIEW));
    },
  },
  {
    what: 'a value that does not match its checksum, in a table',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 2_000);
        await db.put(recordKey(1_200), sealed(1_201, encodeRecord(records[1_200])), VIEW);
      }),
  },
  {
    what: 'a value without its checksum, in the write-ahead log',
    fromFiles: true,
    make: (f) =>
      tamper(
        f,
        async (db) => {
          await putAll(db, 0, 50);
          await db.put(recordKey(50), encodeRecord(records[50]), VIEW);
        },
        true,
      ),
  },
  {
    what: 'a value that is not a record, with its checksum, in a table',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 500);
        await db.put(recordKey(30), sealed(30, cborEncode({ type: 'decided' })), VIEW);
      }),
  },
  {
    what: 'a key among the records that is not a record’s',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 500);
        await db.put(Uint8Array.of(...recordKey(250), 0), sealed(250, encodeRecord(records[250])), VIEW);
      }),
  },
  {
    what: 'keys after the records’ (another key space)',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 500);
        await db.put(Uint8Array.of(0x21, 0x61), Uint8Array.of(1, 2, 3), VIEW);
      }),
  },
  {
    what: 'records that do not start at position 0',
    fromFiles: true,
    make: (f) =>
      direct(f, async (db) => {
        await putAll(db, 0, 300);
        await db.del(recordKey(0), VIEW);
      }),
  },
  {
    what: 'a data block of a table damaged',
    fromFiles: true,
    make: async (f) => {
      await write(f, records.slice(0, 2_000));
      await compact(f);
      const table = readdirSync(f).find((name) => name.endsWith('.ldb')) as string;
      const bytes = readFileSync(join(f, table));
      bytes[100] = (bytes[100] as number) ^ 0x10;
      writeFileSync(join(f, table), bytes);
    },
  },
];

test('a read-through from the files gives what LevelDB’s iterator gives, for folders in many shapes', async () => {
  for (const shape of SHAPES) {
    await withHome(async (home) => {
      const folder = folderOf(home);
      await shape.make(folder);
      const found = inspectFolder(folder, 'ledgerstore/level');
      if (found.state === 'database') {
        const files = RecordFiles.open(folder, found.live);
        assert.is(files !== null, shape.fromFiles, `${shape.what}: read from the files`);
        files?.close();
      }
      const viaFiles = await readThrough(folder, honchoCodec);
      const viaIterator = await readThrough(folder, iteratorCodec);
      assert.equal(viaFiles, viaIterator, shape.what);
    });
  }
});

test('the files of an intact ledger give every record, in chunks that cut tables between blocks', async () => {
  await withHome(async (home) => {
    const folder = folderOf(home);
    await write(folder, records.slice(0, 6_000));
    await compact(folder);
    await write(folder, records.slice(6_000));
    const found = inspectFolder(folder, 'ledgerstore/level');
    if (found.state !== 'database') throw new Error(`the folder is ${found.state}`);
    const files = RecordFiles.open(folder, found.live);
    if (files === null) throw new Error('the files were left to the iterator');
    const chunks = files.chunks(0);
    let taken = 0;
    let step = chunks.next();
    for (; step.done !== true; step = chunks.next()) {
      const { bytes, starts, ends, count, first } = step.value;
      assert.is(first, taken);
      for (let n = 0; n < count; n++) {
        const body = bytes.subarray(starts[n] as number, ends[n] as number);
        assert.equal(Buffer.from(body), Buffer.from(encodeRecord(records[first + n])), `record ${first + n}`);
      }
      taken += count;
    }
    files.close();
    assert.equal(step.value, { position: records.length, whole: true });
    assert.is(taken, records.length);
  });
});

test.run();
