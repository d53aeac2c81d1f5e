/**
 * Read-throughs at once on one thread: two logs opened together (JSONL files, LevelDB folders),
 * each with a replay that waits between its records (an async replay, a replay hook), so that
 * one log's runs are scanned while the other's are still being read. Each must take in exactly
 * what it takes alone.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyLedger } from '../lib/copy.js';
import { workload } from '../lib/honcho/synthetic.js';
import {
  backendFor,
  type EventLog,
  encodeRecord,
  honchoCodec,
  jsonlBackend,
  levelBackend,
  type OpenOptions,
  type Record,
} from '../lib/index.js';
import { withHome } from './support/ledger.js';

/** Small runs, so that each log has many and their scans interleave. */
const CHUNK = 16 << 10;

type Open = (options: OpenOptions<Record>) => Promise<EventLog<Record>>;

const jsonlAt =
  (path: string): Open =>
  (options) =>
    jsonlBackend(path, { codec: honchoCodec, chunkSize: CHUNK, scan: { threads: 1 } }).open(options);

const levelAt =
  (folder: string): Open =>
  (options) =>
    levelBackend(folder, { codec: honchoCodec }).open(options);

/** The records of a log, read through with a replay that waits every `every` records. */
async function readThrough(open: Open, every: number): Promise<string[]> {
  const got: string[] = [];
  const log = await open({
    readOnly: true,
    replayLine: async (line) => {
      got.push(encodeRecord(line.record()));
      if (got.length % every === 0) await setImmediate();
    },
    replay: async (record) => {
      got.push(encodeRecord(record));
      if (got.length % every === 0) await setImmediate();
    },
  });
  await log.close();
  return got;
}

/** Two ledgers of 4,000 records, as JSONL files in `dir`. */
function twoLedgers(dir: string): string[] {
  return [1, 2].map((seed) => {
    const path = join(dir, `ledger-${seed}.jsonl`);
    writeFileSync(path, [...workload({ records: 4000, seed })].map((r: Record) => `${encodeRecord(r)}\n`).join(''));
    return path;
  });
}

/** Each of `opens` read alone, then all at once with replays that wait: the same records. */
async function sameTogether(opens: readonly Open[]): Promise<void> {
  const alone: string[][] = [];
  for (const open of opens) alone.push(await readThrough(open, 1e9));
  assert.ok(alone.every((records) => records.length === 4000));
  for (const every of [1, 7, 100]) {
    const together = await Promise.all(opens.map((open) => readThrough(open, every)));
    assert.equal(together, alone, `waiting every ${every} records`);
  }
}

test('two JSONL logs read through at once, their replays waiting between lines: each takes in what it takes alone', async () => {
  await withHome(async (home) => {
    await sameTogether(twoLedgers(home.dir).map(jsonlAt));
  });
});

test('two LevelDB logs read through at once, their replays waiting between values: each takes in what it takes alone', async () => {
  await withHome(async (home) => {
    const folders: string[] = [];
    for (const path of twoLedgers(home.dir)) {
      const folder = path.replace(/\.jsonl$/, '.level');
      await copyLedger(backendFor(path), backendFor(`level:${folder}`));
      folders.push(folder);
    }
    await sameTogether(folders.map(levelAt));
  });
});

test.run();
