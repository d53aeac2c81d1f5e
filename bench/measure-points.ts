/**
 * The point queries `bench/run.ts` measures, each run in a child process (`bench/measure.ts`):
 * `isDecided`, `sentIds` and `conclusion` through the public `Ledger` of a JSONL file or a
 * LevelDB folder, and beside them the backend's bare point read, one record's bytes read where
 * they are known to be (a `pread` of one line whose offset is known; classic-level's `get` of
 * one key), nothing decoded. Each times up to `n` queries awaited one after the other, after as
 * many untimed (memoryd asks them of a ledger it opened at start, not of a cold one).
 *
 * @module
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { levelBackend } from '../backends/level/index.js';
import { honchoCodec } from '../lib/honcho/codec.js';
import { Ledger } from '../lib/ledger.js';
import { now, type Timing } from './common.js';
import type { PointQuery } from './results-schema.js';

/** The queries of a point-query run: `n` picked evenly from `all`, cycling when it holds fewer. */
function evenly<T>(all: readonly T[], n: number): T[] {
  if (all.length === 0) throw new Error('nothing to query');
  const step = all.length / n;
  return Array.from({ length: n }, (_, i) => all[Math.floor(i * step) % all.length] as T);
}

/** The seconds a run's untimed and timed passes each take at most: a slow query stops there. */
const BUDGET_SECONDS = 2;

/**
 * Runs `query` over `args` untimed once, then timed: the run's {@link Timing}. Each pass stops
 * after {@link BUDGET_SECONDS}, so that a query that reads the whole ledger is timed on fewer
 * queries rather than holding the run for minutes.
 */
async function timed<T>(args: readonly T[], query: (arg: T) => Promise<unknown> | unknown): Promise<Timing> {
  const pass = async (): Promise<Timing> => {
    const start = now();
    let count = 0;
    for (const arg of args) {
      await query(arg);
      count++;
      if (now() - start > BUDGET_SECONDS) break;
    }
    return { count, seconds: now() - start };
  };
  await pass();
  return pass();
}

/** A LevelDB log is a folder (`.level`); any other is a JSONL file. */
const isLevel = (file: string): boolean => file.endsWith('.level');

/** `n` of `query` through the `Ledger` opened read-only at `file`, on decisions spread through the ledger. */
export async function pointQuery(file: string, query: PointQuery, n: number): Promise<Timing> {
  const ledger = await Ledger.open(isLevel(file) ? levelBackend(file, { codec: honchoCodec }) : file, {
    readOnly: true,
  });
  try {
    const decisions = [];
    for await (const decision of ledger.decisions()) decisions.push(decision);
    switch (query) {
      case 'isDecided':
        return await timed(evenly(decisions, n), ({ item }) => ledger.isDecided(item));
      case 'sentIds':
        return await timed(evenly(decisions, n), ({ item }) => ledger.sentIds(item));
      case 'conclusion': {
        const concludes = decisions.flatMap(({ action }) => (action.type === 'conclude' ? [action] : []));
        return await timed(evenly(concludes, n), (c) => ledger.conclusion(c.workspace, c.text));
      }
    }
  } finally {
    await ledger.close();
  }
}

/**
 * The backend's bare point read, `n` times at records spread through the log: of a JSONL file,
 * a `pread` of one line at its offset (the offsets found untimed); of a LevelDB folder (a copy,
 * made untimed, as the engine's read-only open reads one), classic-level's `get` of one record
 * key (the keys listed untimed).
 */
export async function pointBare(file: string, n: number): Promise<Timing> {
  return isLevel(file) ? levelGets(file, n) : lineReads(file, n);
}

function lineReads(file: string, n: number): Timing {
  const text = fs.readFileSync(file);
  const lines: { start: number; length: number }[] = [];
  for (let start = 0, end = text.indexOf(10); end !== -1; start = end + 1, end = text.indexOf(10, start))
    lines.push({ start, length: end - start + 1 });
  const reads = evenly(lines, n);
  const buffer = Buffer.allocUnsafe(Math.max(...reads.map((r) => r.length)));
  const fd = fs.openSync(file, 'r');
  try {
    let bytes = 0;
    const read = ({ start, length }: { start: number; length: number }): void => {
      bytes += fs.readSync(fd, buffer, 0, length, start);
    };
    for (const r of reads) read(r);
    const start = now();
    for (const r of reads) read(r);
    const seconds = now() - start;
    if (bytes === 0) throw new Error(`${file}: nothing read`);
    return { count: reads.length, seconds };
  } finally {
    fs.closeSync(fd);
  }
}

async function levelGets(folder: string, n: number): Promise<Timing> {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'level-point-'));
  try {
    fs.cpSync(folder, copy, { recursive: true });
    const db = new ClassicLevel<Uint8Array, Uint8Array>(copy, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open({ createIfMissing: false });
    try {
      // the record keys, as replayLevelBare reads their values: 0x01 and the position
      const keys = await db.keys({ gte: Uint8Array.of(1), lt: Uint8Array.of(2) }).all();
      let bytes = 0;
      const timing = await timed(evenly(keys, n), async (key) => {
        bytes += (await db.get(key))?.length ?? 0;
      });
      if (bytes === 0) throw new Error(`${folder}: only empty values`);
      return timing;
    } finally {
      await db.close();
    }
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}
