/**
 * A JSONL log's point read (`read(p, p + 1)`, as memoryd's `sentIds` and `conclusion` make):
 * exactly that record, reading a bounded number of bytes however far into the file it is,
 * whether the log learnt where its records start by reading through, by appending them, or (after
 * a resumed open) by finding them once. Bytes are counted through the file layer, never timed.
 */
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../backends/jsonl-write-whole.js';
import { syntheticLines, workload } from '../lib/honcho/synthetic.js';
import {
  decodeRecord,
  type EventLog,
  type FileIO,
  honchoCodec,
  jsonlBackend,
  nodeFileIO,
  type Record,
} from '../lib/index.js';
import { withHome } from './support/ledger.js';

const RECORDS = 20_000;
/** The most lines a point read may read: the stride of the starts a log remembers. */
const POINT_READ_LINES = 64;

/** The file layer, counting the bytes its reads give. */
function countingIO(): { io: FileIO; bytesRead: () => number } {
  let bytes = 0;
  const io: FileIO = {
    ...nodeFileIO,
    read: (fd, buffer, offset, length, position) => {
      const got = nodeFileIO.read(fd, buffer, offset, length, position);
      bytes += got;
      return got;
    },
  };
  return { io, bytesRead: () => bytes };
}

/** The file's lines, decoded; and the most bytes any `POINT_READ_LINES` lines in a row take. */
function linesOf(file: string): { records: Record[]; strideBytes: number } {
  const bytes = readFileSync(file);
  const records: Record[] = [];
  const starts: number[] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(10, start);
    starts.push(start);
    records.push(decodeRecord(bytes, start, end + 1));
    start = end + 1;
  }
  starts.push(bytes.length);
  let strideBytes = 0;
  for (let n = 0; n + POINT_READ_LINES < starts.length; n++)
    strideBytes = Math.max(strideBytes, (starts[n + POINT_READ_LINES] as number) - (starts[n] as number));
  return { records, strideBytes };
}

async function pointRead(log: EventLog<Record>, position: number): Promise<Record[]> {
  const got: Record[] = [];
  for await (const record of log.read(position, position + 1)) got.push(record);
  return got;
}

/** Point reads far into the file, each exactly its record, each reading 64 lines at most. */
async function assertPointReads(log: EventLog<Record>, file: string, bytesRead: () => number): Promise<void> {
  const { records, strideBytes } = linesOf(file);
  assert.is(records.length, RECORDS);
  // first, last, on a stride's boundary, just before and after one, and far from the start
  for (const position of [0, RECORDS - 1, 64 * 200, 64 * 200 - 1, 64 * 200 + 1, 17_777, 4096 * 3 + 4095]) {
    const before = bytesRead();
    assert.equal(await pointRead(log, position), [records[position]], `the record at ${position}`);
    const read = bytesRead() - before;
    assert.ok(read > 0, `the record at ${position} was read from the file`);
    assert.ok(read <= strideBytes, `the record at ${position} took ${read} bytes, more than ${strideBytes}`);
  }
}

test('a point read after the read-through reads 64 lines at most', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: RECORDS, seed: 3 }));
    const { io, bytesRead } = countingIO();
    const log = await jsonlBackend(home.path, { codec: honchoCodec, io }).open({ readOnly: true });
    try {
      await assertPointReads(log, home.path, bytesRead);
    } finally {
      await log.close();
    }
  });
});

test('a point read of records this log appended reads 64 lines at most', async () => {
  await withHome(async (home) => {
    const { io, bytesRead } = countingIO();
    const log = await jsonlBackend(home.path, { codec: honchoCodec, io }).open();
    try {
      // batches of sizes that fall across the strides' boundaries every way
      let batch: Record[] = [];
      let size = 1;
      for (const record of workload({ records: RECORDS, seed: 4 })) {
        batch.push(record);
        if (batch.length === size) {
          await log.append(batch);
          batch = [];
          size = (size * 7) % 191;
        }
      }
      if (batch.length > 0) await log.append(batch);
      await assertPointReads(log, home.path, bytesRead);
    } finally {
      await log.close();
    }
  });
});

test('after a resumed open, a point read finds the starts once, then reads 64 lines at most', async () => {
  await withHome(async (home) => {
    await writeJsonlWhole(home.path, syntheticLines({ records: RECORDS, seed: 5 }));
    const first = await jsonlBackend(home.path, { codec: honchoCodec }).open({ readOnly: true });
    const point = await first.resumePoint();
    await first.close();
    const { io, bytesRead } = countingIO();
    const log = await jsonlBackend(home.path, { codec: honchoCodec, io }).open({ readOnly: true, resume: point });
    try {
      assert.is(log.head, RECORDS);
      const { records } = linesOf(home.path);
      assert.equal(await pointRead(log, 1234), [records[1234]], 'the first read finds where the records start');
      await assertPointReads(log, home.path, bytesRead);
    } finally {
      await log.close();
    }
  });
});

test.run();
