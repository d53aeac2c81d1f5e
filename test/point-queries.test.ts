/**
 * memoryd's point queries, `sentIds()` and `conclusion()`, read the one record they need from the
 * log (a `sent` record's ids are not kept in memory): a read of that position alone, on every
 * backend, not a read from there to the head (on LevelDB an iterator that decoded up to a
 * thousand values a query, on JSONL a buffer's worth of lines).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonlBackend } from '../backends/jsonl.js';
import { levelBackend } from '../backends/level/index.js';
import { memoryBackend } from '../backends/memory.js';
import { workload } from '../lib/honcho/synthetic.js';
import { honchoCodec, Ledger, type LogBackend, type Position, type Record } from '../lib/index.js';
import { conclude, decided, edit, sent, unconclude } from './support/ledger.js';

interface Reads {
  /** Each read's range, as asked. */
  ranges: [Position | undefined, Position | undefined][];
  /** The records all reads yielded. */
  yielded: number;
}

/** `inner`, whose logs count what each `read` is asked for and what it yields. */
function countingReads(inner: LogBackend<Record>): { backend: LogBackend<Record>; reads: Reads } {
  const reads: Reads = { ranges: [], yielded: 0 };
  const backend: LogBackend<Record> = {
    ...inner,
    open: async (options) => {
      const log = await inner.open(options);
      const read = log.read.bind(log);
      Object.defineProperty(log, 'read', {
        value: async function* (from?: Position, to?: Position) {
          reads.ranges.push([from, to]);
          for await (const record of read(from, to)) {
            reads.yielded++;
            yield record;
          }
        },
      });
      return log;
    },
  };
  return { backend, reads };
}

/** 4,000 records of the synthetic workload with, halfway, a conclusion sent, undone and sent again. */
function records(): Record[] {
  const [first, undo, second] = [edit('edit-a', 0), edit('edit-b', 0), edit('edit-c', 0)];
  const synthetic = [...workload({ records: 4000, seed: 3 })];
  return [
    ...synthetic.slice(0, 2000),
    decided(first, conclude('trusted', 'likes tea')),
    sent(first, ['con-1']),
    decided(undo, unconclude('trusted', 'likes tea')),
    sent(undo, []),
    decided(second, conclude('trusted', 'likes tea')),
    sent(second, ['con-2']),
    ...synthetic.slice(2000),
  ];
}

const dirs: string[] = [];
test.after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'point-queries-'));
  dirs.push(dir);
  return dir;
}

const backends: [string, () => LogBackend<Record>][] = [
  ['memory', () => memoryBackend({ codec: honchoCodec })],
  ['jsonl', () => jsonlBackend(path.join(temp(), 'honcho.jsonl'), { codec: honchoCodec })],
  ['level', () => levelBackend(path.join(temp(), 'ledger'), { codec: honchoCodec })],
];

for (const [name, make] of backends) {
  test(`${name}: sentIds() and conclusion() read one record each`, async () => {
    const { backend, reads } = countingReads(make());
    await using ledger = await Ledger.open(backend);
    const all = records();
    await Promise.all(all.map((record) => ledger.append(record))); // group commit: a fixture, not a test of appends
    const early = all.find((r): r is Extract<Record, { type: 'sent' }> => r.type === 'sent' && r.ids.length > 0);
    assert.ok(early !== undefined, 'the workload sends something');
    reads.ranges.length = 0;
    reads.yielded = 0;

    assert.equal(await ledger.sentIds(early.item), early.ids);
    const answer = await ledger.conclusion('trusted', 'likes tea');
    assert.equal(answer, { item: edit('edit-c', 0), id: 'con-2' }, 'the latest conclusion not undone');

    assert.is(reads.yielded, 2, 'one record a query');
    assert.is(reads.ranges.length, 2);
    for (const [from, to] of reads.ranges) assert.is(to, (from as number) + 1, 'a read of one position');
  });
}

test.run();
