/**
 * A reader following a JSONL file that another writer appends to (backends/jsonl-follow.ts): the
 * lines its watch counts are taken by its next refresh, not read and counted again, and
 * what it takes so is what counting them would have given (the records, where they are read from,
 * the resume point). The failures of a followed file are in test/error-paths/jsonl-follow.test.ts.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type EventLog,
  encodeRecord,
  type FileIO,
  honchoCodec,
  jsonlBackend,
  nodeFileIO,
  type Record,
} from '../lib/index.js';
import { until } from './conformance/common.js';
import { decided, turn, withHome } from './support/ledger.js';

const line = (record: Record): string => `${encodeRecord(record)}\n`;
const record = (n: number): Record => decided(turn('chat-1', n + 1));
const lines = (from: number, to: number): string => {
  let text = '';
  for (let n = from; n < to; n++) text += line(record(n));
  return text;
};

/** The file system, counting the bytes read through it. */
function countingIO(): FileIO & { bytesRead: number } {
  const io = {
    ...nodeFileIO,
    bytesRead: 0,
    read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
      const got = nodeFileIO.read(fd, buffer, offset, length, position);
      io.bytesRead += got;
      return got;
    },
  };
  return io;
}

const reader = (path: string, io: FileIO): Promise<EventLog<Record>> =>
  jsonlBackend<Record>(path, { codec: honchoCodec, heartbeatMs: 10, io }).open({ readOnly: true });

/** Watches `log`; gives the heads it told of and the way to stop. */
async function watched(log: EventLog<Record>): Promise<{ heads: number[]; unwatch: () => Promise<void> }> {
  const heads: number[] = [];
  const unwatch = await (log.watch as NonNullable<EventLog<Record>['watch']>)({ onHead: (head) => heads.push(head) });
  return { heads, unwatch };
}

async function readAll(log: EventLog<Record>, from: number): Promise<Record[]> {
  const got: Record[] = [];
  for await (const r of log.read(from)) got.push(r);
  return got;
}

test('a follower does not read appended lines a third time: its watch counts them, its refresh takes the count, its read decodes them', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, lines(0, 10));
    const io = countingIO();
    const log = await reader(home.path, io);
    const watch = await watched(log);
    await until(() => watch.heads.at(-1) === 10, 'the head at the start');
    const appended = lines(10, 20);
    io.bytesRead = 0;
    appendFileSync(home.path, appended);
    await until(() => watch.heads.at(-1) === 20, 'the watch to tell of the new lines');
    assert.is(io.bytesRead, appended.length, 'the watch read the new lines once');
    assert.is(await log.refresh(), 20);
    assert.is(io.bytesRead, appended.length, 'the refresh took the count: it read nothing');
    assert.equal(
      await readAll(log, 10),
      Array.from({ length: 10 }, (_, n) => record(10 + n)),
    );
    await watch.unwatch();
    await log.close();
  });
});

test('what a refresh takes from its watch is what counting would give: records read from past many seek strides, the head, the last line, and the count of lines the watch had not reached', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, lines(0, 3));
    const taken = await reader(home.path, countingIO());
    const counted = await reader(home.path, countingIO()); // never watched: it counts at its refresh
    const watch = await watched(taken);
    const second = await watched(taken); // a second watch counts the same lines: they are taken once
    await until(() => watch.heads.at(-1) === 3 && second.heads.at(-1) === 3, 'the heads at the start');
    const total = 3 * 4096 + 17; // past three of the reader's seek strides
    appendFileSync(home.path, lines(3, total));
    await until(() => watch.heads.at(-1) === total && second.heads.at(-1) === total, 'the watches to count');
    appendFileSync(home.path, `${lines(total, total + 2)}{"partial`); // lines no watch looked at yet, and half of one
    assert.is(await taken.refresh(), total + 2);
    assert.is(await counted.refresh(), total + 2);
    for (const from of [0, 4095, 4096, 8192 + 5, 3 * 4096, total + 1]) {
      assert.equal(await readAll(taken, from), await readAll(counted, from), `read from ${from}`);
    }
    assert.equal(await taken.resumePoint(), await counted.resumePoint());
    await watch.unwatch();
    await second.unwatch();
    await taken.close();
    await counted.close();
  });
});

test.run();
