/**
 * Read-throughs at once on one thread: two logs opened together, each with a replay that waits
 * between its records (an async replay, a replay hook), so that one log's runs are scanned while
 * the other's are still being read. Each must take in exactly what it takes alone.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../lib/honcho/synthetic.js';
import { encodeRecord, honchoCodec, jsonlBackend, type Record } from '../lib/index.js';
import { withHome } from './support/ledger.js';

/** Small runs, so that each log has many and their scans interleave. */
const CHUNK = 16 << 10;

/** The records of the JSONL file at `path`, read through with a replay that waits every `every` lines. */
async function readThrough(path: string, every: number): Promise<string[]> {
  const got: string[] = [];
  const log = await jsonlBackend(path, { codec: honchoCodec, chunkSize: CHUNK, scan: { threads: 1 } }).open({
    readOnly: true,
    replayLine: async (line) => {
      got.push(encodeRecord(line.record()));
      if (got.length % every === 0) await setImmediate();
    },
  });
  await log.close();
  return got;
}

test('two JSONL logs read through at once, their replays waiting between lines: each takes in what it takes alone', async () => {
  await withHome(async (home) => {
    const paths = [1, 2].map((seed) => {
      const path = join(home.dir, `ledger-${seed}.jsonl`);
      writeFileSync(path, [...workload({ records: 4000, seed })].map((r: Record) => `${encodeRecord(r)}\n`).join(''));
      return path;
    });
    const alone = [await readThrough(paths[0] as string, 1e9), await readThrough(paths[1] as string, 1e9)];
    for (const every of [1, 7, 100]) {
      const together = await Promise.all(paths.map((path) => readThrough(path, every)));
      assert.equal(together, alone, `waiting every ${every} lines`);
    }
  });
});

test.run();
