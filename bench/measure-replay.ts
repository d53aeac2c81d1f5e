/**
 * The replays `bench/run.ts` measures, each run in a child process (`bench/measure.ts`): the
 * engine's `Ledger.open` of each backend, and beside it the bare loops that do only the
 * unavoidable work (the file's lines through `JSON.parse`; classic-level's own iterator over the
 * LevelDB folder's values) and the loop a user would write by hand.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { ClassicLevel } from 'classic-level';
import { jsonlBackend } from '../backends/jsonl.js';
import { levelBackend } from '../backends/level/index.js';
import { memoryBackend } from '../backends/memory.js';
import { fillLedger } from '../lib/copy.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import type { Record } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import type { LogBackend } from '../lib/log.js';
import type { Target } from '../lib/target.js';
import { now, progress, progressDone, readThroughInChunks, startupQueries, type Timing } from './common.js';

/** Reads the file, splits it into lines and `JSON.parse`s each: the least a replay must do. */
export function replayBare(file: string): Timing {
  const start = now();
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  let count = 0;
  let decided = 0;
  for (const line of lines) {
    if (line.length === 0) continue;
    // Looking at what was parsed keeps the parse from being optimized away.
    if ((JSON.parse(line) as { type: string }).type === 'decided') decided++;
    count++;
  }
  const seconds = now() - start;
  if (decided === 0 && count > 0) throw new Error(`${file}: no decided record`);
  return { count, seconds };
}

/** {@link replayBare} over 8 MiB chunks, for a file longer than a string can be. */
export function replayBareChunked(file: string): Timing {
  const start = now();
  const count = readThroughInChunks(file);
  return { count, seconds: now() - start };
}

/**
 * What a user would write by hand to replay the file: `readline` over a stream, `JSON.parse` of
 * each line, and each item's last record type in a `Map` keyed by the item's JSON (no checks).
 */
export async function replayUser(file: string): Promise<Timing> {
  const start = now();
  const states = new Map<string, string>();
  let count = 0;
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.length === 0) continue;
    const record = JSON.parse(line) as { type: string; item: unknown };
    states.set(JSON.stringify(record.item), record.type);
    count++;
  }
  const seconds = now() - start;
  if (states.size === 0 && count > 0) throw new Error(`${file}: no item`);
  return { count, seconds };
}

/** Which backend a measurement runs on. */
export type Flavor = 'jsonl' | 'level' | 'memory';

/** The ledger at `file` (a JSONL file, a LevelDB folder), or a fresh in-memory one. */
export const ledgerAt = (file: string, flavor: Flavor): Target =>
  flavor === 'level'
    ? levelBackend(file, { codec: honchoCodec })
    : flavor === 'memory'
      ? memoryBackend({ codec: honchoCodec })
      : file;

/**
 * Opens a ledger read-only, reading it through. In memory, the records of the JSONL file `file`
 * are put there first, untimed. A JSONL file with `threads` is read through on that many threads
 * in all (else on all the machine gives).
 */
export async function replayEngine(file: string, flavor: Flavor, threads?: number): Promise<Timing> {
  const target =
    threads === undefined ? ledgerAt(file, flavor) : jsonlBackend(file, { codec: honchoCodec, scan: { threads } });
  if (flavor === 'memory') {
    // a fresh in-memory log, filled with the file's records first, untimed
    const source = await Ledger.open(file, { readOnly: true });
    await fillLedger(target as LogBackend<Record>, source.records());
    await source.close();
  }
  const start = now();
  const ledger = await Ledger.open(target, { readOnly: true });
  const seconds = now() - start;
  const count = ledger.size;
  await startupQueries(ledger);
  await ledger.close();
  return { count, seconds };
}

/** Values asked of LevelDB's iterator at a time by {@link replayLevelBare}: 10,000 measured slower. */
export const LEVEL_BARE_BATCH = 1000;
/** classic-level's bound on the bytes of one `nextv` (16 KiB by default, about 120 values here). */
const LEVEL_BARE_BATCH_BYTES = 1 << 20;

/**
 * LevelDB's own limit for a replay: classic-level alone, opening a copy of the LevelDB folder
 * (made untimed, as the engine's read-only open reads a copy) and reading every value through
 * its iterator, `nextv` of {@link LEVEL_BARE_BATCH} values at a time as views, no keys, no
 * block cache filled; nothing decoded, checked or kept. What is left of the bare JSONL loop's
 * time after it is all a LevelDB backend's replay has for everything else.
 */
export async function replayLevelBare(folder: string): Promise<Timing> {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'level-bare-'));
  try {
    fs.cpSync(folder, copy, { recursive: true });
    const start = now();
    const db = new ClassicLevel<Uint8Array, Uint8Array>(copy, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open({ createIfMissing: false });
    let count = 0;
    let bytes = 0;
    try {
      const values = db.iterator({
        keys: false,
        fillCache: false,
        highWaterMarkBytes: LEVEL_BARE_BATCH_BYTES,
        gte: Uint8Array.of(1),
        lt: Uint8Array.of(2),
      });
      for (
        let batch = await values.nextv(LEVEL_BARE_BATCH);
        batch.length > 0;
        batch = await values.nextv(LEVEL_BARE_BATCH)
      ) {
        // the lengths summed keep the values from going unread
        for (const [, value] of batch) bytes += (value as Uint8Array).length;
        count += batch.length;
      }
      await values.close();
    } finally {
      await db.close();
    }
    const seconds = now() - start;
    if (bytes === 0 && count > 0) throw new Error(`${folder}: only empty values`);
    return { count, seconds };
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

/**
 * The ledger `jsonl` imported into a LevelDB folder beside it, once, and kept for later runs
 * like the JSONL file. The import goes to `<folder>.tmp-<pid>`, renamed when whole.
 */
export async function levelLedger(jsonl: string): Promise<{ folder: string; bytes: number }> {
  const folder = jsonl.replace(/\.jsonl$/, '.level');
  if (!fs.existsSync(folder)) {
    const start = now();
    const temp = `${folder}.tmp-${process.pid}`;
    fs.rmSync(temp, { recursive: true, force: true });
    const source = await jsonlBackend(jsonl, { codec: honchoCodec }).open({ readOnly: true });
    let imported: number;
    try {
      imported = await fillLedger(levelBackend(temp, { codec: honchoCodec }), source.read(), (appended) =>
        progress(`importing ${path.basename(jsonl)} into LevelDB: ${Math.round((100 * appended) / source.head)}%`),
      );
    } finally {
      await source.close();
    }
    fs.renameSync(temp, folder);
    progressDone();
    console.log(
      `imported ${path.relative(process.cwd(), folder)}: ${imported} records in ${(now() - start).toFixed(1)} s`,
    );
  }
  const bytes = fs.readdirSync(folder).reduce((sum, name) => sum + fs.statSync(path.join(folder, name)).size, 0);
  return { folder, bytes };
}
