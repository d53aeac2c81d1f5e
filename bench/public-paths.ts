/**
 * What the dependencies' public paths cost against the private reaches they replaced (issue
 * 23): `node dist/bench/public-paths.js` prints, in one run, on a synthetic ledger of 200k
 * records (`bench/workload.ts`, kept in bench/data/):
 *
 * - Strings from bytes: Buffer's undocumented `latin1Slice`/`utf8Slice`, which the line readers
 *   called for every string of every line, against the public `buffer.toString(encoding, start,
 *   end)` (and `TextDecoder` for UTF-8) they call now, per string, with the ratio; then how many
 *   such strings a replay makes, and so what the public path adds to the replay.
 * - The replay itself (`Ledger.open` read-only, as `bench/run.ts` times it), the median of a few.
 * - A JSONL point read (`read(p, p + 1)`, as memoryd's `sentIds` and `conclusion` make) at
 *   random positions, beside a bare `pread` of the same line.
 *
 * Prints only; writes no results file.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonlBackend } from '../backends/jsonl.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import { Ledger } from '../lib/index.js';
import { benchData, syntheticLedger } from './common.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RECORDS = 200_000;
const REPLAYS = 5;
const POINT_READS = 20_000;

/** Buffer's own slicers, which `toString` calls after checking its arguments: measured here only. */
interface PrivateSlicers {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/** Nanoseconds per call of `make` over `[start, end)`, the median of 7 rounds of `calls` calls. */
function nsPerCall(make: (start: number, end: number) => string, start: number, end: number, calls: number): number {
  const rounds: number[] = [];
  let sink = 0;
  for (let round = 0; round < 7; round++) {
    const t = process.hrtime.bigint();
    for (let n = 0; n < calls; n++) sink += make(start, end).length;
    rounds.push(Number(process.hrtime.bigint() - t) / calls);
  }
  if (sink === -1) console.log(sink); // keeps the strings from being optimized away
  return median(rounds);
}

/** Each kind of string a line reader makes: old private slicer against the public path. */
function stringMicrobench(): Map<string, { old: number; now: number }> {
  const time = '2026-01-01T00:00:00.000Z';
  const id = 'session-0001.abc_DEF';
  const text = `Une conclusion — with some UTF-8: ${'ü'.repeat(20)} ${'x'.repeat(60)}`;
  const bytes = Buffer.from(`${time}${id}${text}`, 'utf8');
  const slicers = bytes as unknown as PrivateSlicers;
  const decoder = new TextDecoder();
  const t0 = 0;
  const t1 = t0 + time.length;
  const i1 = t1 + id.length;
  const u1 = bytes.length;
  const calls = 300_000;
  const results = new Map<string, { old: number; now: number }>();
  results.set('latin1, 24 B (a time)', {
    old: nsPerCall((a, b) => slicers.latin1Slice(a, b), t0, t1, calls),
    now: nsPerCall((a, b) => bytes.toString('latin1', a, b), t0, t1, calls),
  });
  results.set('latin1, 20 B (an id)', {
    old: nsPerCall((a, b) => slicers.latin1Slice(a, b), t1, i1, calls),
    now: nsPerCall((a, b) => bytes.toString('latin1', a, b), t1, i1, calls),
  });
  results.set(`utf8, ${u1 - i1} B (a text)`, {
    old: nsPerCall((a, b) => slicers.utf8Slice(a, b), i1, u1, calls),
    now: nsPerCall((a, b) => bytes.toString('utf8', a, b), i1, u1, calls),
  });
  results.set(`utf8 by TextDecoder, ${u1 - i1} B`, {
    old: nsPerCall((a, b) => slicers.utf8Slice(a, b), i1, u1, calls),
    now: nsPerCall((a, b) => decoder.decode(bytes.subarray(a, b)), i1, u1, calls),
  });
  return results;
}

/** How many strings of each encoding a replay makes from bytes, counted through `Buffer#toString`. */
async function stringsOfReplay(file: string): Promise<{ latin1: number; utf8: number }> {
  const counts = { latin1: 0, utf8: 0 };
  const original = Buffer.prototype.toString;
  Buffer.prototype.toString = function (this: Buffer, encoding?: BufferEncoding, start?: number, end?: number) {
    if (encoding === 'latin1') counts.latin1++;
    else if (encoding === 'utf8') counts.utf8++;
    return original.call(this, encoding, start, end);
  };
  try {
    const ledger = await Ledger.open(file, { readOnly: true });
    await ledger.close();
  } finally {
    Buffer.prototype.toString = original;
  }
  return counts;
}

/** Seconds a read-only open (the replay) takes, the median of {@link REPLAYS} after one to warm up. */
async function replaySeconds(file: string): Promise<number> {
  const runs: number[] = [];
  for (let n = 0; n <= REPLAYS; n++) {
    const start = performance.now();
    const ledger = await Ledger.open(file, { readOnly: true });
    const seconds = (performance.now() - start) / 1000;
    await ledger.close();
    if (n > 0) runs.push(seconds);
  }
  return median(runs);
}

/** Microseconds per point read at random positions, beside a bare `pread` of the same line. */
async function pointReads(file: string): Promise<{ read: number; pread: number }> {
  const bytes = fs.readFileSync(file);
  const starts: number[] = [];
  for (let start = 0; start < bytes.length; start = bytes.indexOf(10, start) + 1) starts.push(start);
  starts.push(bytes.length);
  let seed = 12345;
  const positions = Array.from({ length: POINT_READS }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % RECORDS;
  });
  const log = await jsonlBackend(file, { codec: honchoCodec }).open({ readOnly: true });
  let sink = 0;
  const t = performance.now();
  for (const p of positions) for await (const record of log.read(p, p + 1)) sink += record.time.length;
  const read = ((performance.now() - t) * 1000) / POINT_READS;
  await log.close();
  const fd = fs.openSync(file, 'r');
  const line = Buffer.allocUnsafe(1 << 16);
  const t2 = performance.now();
  for (const p of positions) {
    const start = starts[p] as number;
    sink += fs.readSync(fd, line, 0, (starts[p + 1] as number) - start, start);
  }
  const pread = ((performance.now() - t2) * 1000) / POINT_READS;
  fs.closeSync(fd);
  if (sink === -1) console.log(sink);
  return { read, pread };
}

async function main(): Promise<void> {
  const dataDir = benchData(ROOT);
  fs.mkdirSync(dataDir, { recursive: true });
  const { file, bytes } = await syntheticLedger(dataDir, RECORDS, 1);
  console.log(`ledger: ${RECORDS} records, ${(bytes / (1 << 20)).toFixed(1)} MiB (${path.basename(file)})`);

  console.log('\nstrings from bytes, ns per string (private slicer -> public path):');
  const micro = stringMicrobench();
  for (const [what, { old, now }] of micro)
    console.log(
      `  ${what.padEnd(32)} ${old.toFixed(1).padStart(6)} -> ${now.toFixed(1).padStart(6)}  x${(now / old).toFixed(2)}`,
    );

  const replay = await replaySeconds(file);
  const strings = await stringsOfReplay(file);
  const latin1 = micro.get('latin1, 20 B (an id)') as { old: number; now: number };
  const utf8 = [...micro].find(([what]) => what.startsWith('utf8,'))?.[1] as { old: number; now: number };
  const addedSeconds =
    (strings.latin1 * Math.max(0, latin1.now - latin1.old) + strings.utf8 * Math.max(0, utf8.now - utf8.old)) / 1e9;
  console.log(`\nreplay (Ledger.open read-only), median of ${REPLAYS}: ${(replay * 1000).toFixed(0)} ms`);
  console.log(`  strings made from bytes: ${strings.latin1} latin1, ${strings.utf8} utf8`);
  console.log(
    `  the public path's added cost, estimated: ${(addedSeconds * 1000).toFixed(2)} ms, ${((100 * addedSeconds) / replay).toFixed(2)}% of the replay`,
  );

  const { read, pread } = await pointReads(file);
  console.log(`\npoint read read(p, p + 1), ${POINT_READS} at random positions:`);
  console.log(
    `  ${read.toFixed(1)} us each; a bare pread of the same line ${pread.toFixed(1)} us (x${(read / pread).toFixed(1)})`,
  );
}

await main();
