/**
 * The appends `bench/run.ts` measures, each run in a child process (`bench/measure.ts`): the
 * engine's `Ledger.append` by one caller and by many at once (group commit), on each backend,
 * and beside them the bare loops (a `pwrite` + `fdatasync` per line, or per batch of lines:
 * group commit's limit; classic-level's synced batch writes: LevelDB's own); then the pairs and
 * rounds of the engine and its bare loops taking turns in one warm process.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { encodeRecord as levelValueOf } from '../backends/level/values.js';
import { encodeValid } from '../lib/honcho/codec.js';
import type { Record } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import { now, SEED, type Timing } from './common.js';
import { type Flavor, ledgerAt } from './measure-replay.js';
import type { Pair } from './results-schema.js';
import { workload } from './workload.js';

/** Appends per run of the single appender and of the bare loop, and per concurrent appender. */
export const APPENDS = 3000;
/** The appenders of the group-commit rows: 16, and 64 (the JSONL file only). */
export const APPENDERS = 16;
export const MANY_APPENDERS = 64;
/** Untimed appends (per appender) before each timed append loop. */
export const WARMUP = 500;
/** Pairs of the bare append loop and one appender, taking turns in one process. */
export const PAIRS = 7;

/** The first `n` records of the workload. */
export function appendRecords(n: number): Record[] {
  return Array.from(workload({ records: n, seed: SEED }));
}

/**
 * The lines of the first `n` records of the workload as the ledger writes them, for the bare
 * loops. Made apart from the records: an engine's loop holds no lines, and a bare loop no
 * records, so that neither pays the other's garbage and live objects in its collections.
 */
export function appendLines(n: number): Buffer[] {
  return appendRecords(n).map((r) => Buffer.from(`${encodeValid(r)}\n`, 'utf8'));
}

/**
 * One `pwrite` and one `fdatasync` per line, synchronously: the least a durable append costs.
 * With `linesPerSync`, that many lines (joined beforehand, untimed) per write and sync: the
 * least a group commit of batches that size costs, its limit.
 */
export function appendBare(file: string, n: number, linesPerSync = 1): Timing {
  const lines = appendLines(n);
  const writes: Buffer[] = [];
  for (let at = 0; at < lines.length; at += linesPerSync)
    writes.push(Buffer.concat(lines.slice(at, at + linesPerSync)));
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    let position = 0;
    const start = now();
    for (const bytes of writes) {
      position += fs.writeSync(fd, bytes, 0, bytes.length, position);
      fs.fdatasyncSync(fd);
    }
    return { count: lines.length, seconds: now() - start };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * LevelDB's own limit: classic-level's batch writes with `sync`, no ledger, of the records' CBOR
 * (as the LevelDB backend stores them, without its checksum) under 8-byte keys; `writers` callers
 * at once, each awaiting its write of one record, which LevelDB itself joins into one synced
 * write of its log where they meet.
 */
export async function appendLevelBare(folder: string, n: number, writers: number): Promise<Timing> {
  const records = appendRecords(n);
  const values = records.map((record) => levelValueOf(record));
  const db = new ClassicLevel<Uint8Array, Uint8Array>(folder, { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  try {
    let next = 0;
    const start = now();
    const writer = async (): Promise<void> => {
      while (next < values.length) {
        const key = Buffer.alloc(8);
        key.writeUIntBE(next, 2, 6);
        await db.batch([{ type: 'put', key, value: values[next++] as Uint8Array }], { sync: true });
      }
    };
    await Promise.all(Array.from({ length: writers }, writer));
    return { count: values.length, seconds: now() - start };
  } finally {
    await db.close();
  }
}

/** The same loop through the thread pool (`fs.promises`), for comparison with the synchronous calls. */
export async function appendBareAsync(file: string, n: number): Promise<Timing> {
  const lines = appendLines(n);
  const handle = await fs.promises.open(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    let position = 0;
    const start = now();
    for (const line of lines) {
      position += (await handle.write(line, 0, line.length, position)).bytesWritten;
      await handle.datasync();
    }
    return { count: lines.length, seconds: now() - start };
  } finally {
    await handle.close();
  }
}

/** What a user would write by hand for a durable append: `appendFile` of the line on a handle, then `datasync`. */
export async function appendUser(file: string, n: number): Promise<Timing> {
  const lines = appendLines(n);
  const handle = await fs.promises.open(file, 'a', 0o600);
  try {
    const start = now();
    for (const line of lines) {
      await handle.appendFile(line);
      await handle.datasync();
    }
    return { count: lines.length, seconds: now() - start };
  } finally {
    await handle.close();
  }
}

/** `appenders` callers, each awaiting its append before the next; one caller is the plain case. */
export async function appendEngine(file: string, n: number, appenders: number, flavor: Flavor): Promise<Timing> {
  const records = appendRecords(n);
  const count = records.length;
  const ledger = await Ledger.open(ledgerAt(file, flavor));
  try {
    let next = 0;
    const start = now();
    const cpu = process.cpuUsage();
    // A caller takes the next record and calls `append` at once, so that call order is the
    // workload's order and every record is valid when its turn comes. It keeps no record it
    // handed over, as a daemon keeps none: the collector is not made to mark the workload's
    // records, made before the clock started, as live to the end.
    const caller = async (): Promise<void> => {
      while (next < count) {
        const record = records[next] as Record;
        records[next++] = undefined as unknown as Record;
        await ledger.append(record);
      }
    };
    await Promise.all(Array.from({ length: appenders }, caller));
    const seconds = now() - start;
    const { user, system } = process.cpuUsage(cpu);
    if (ledger.size !== count) throw new Error(`${file}: ${ledger.size} records appended, not ${count}`);
    return { count, seconds, cpuSeconds: (user + system) / 1e6 };
  } finally {
    await ledger.close();
  }
}

/**
 * {@link PAIRS} pairs of the bare loop and one appender awaiting each append, in one warm
 * process, taking turns (bare first, then engine first, ...), each on a fresh file in `dir`:
 * a drift of the disk's speed, which moves the bare loop by a third from one process to the
 * next on a virtual disk, then reaches both runs of a pair alike, and the median of the pairs'
 * ratios is the engine's share of the limit.
 */
export async function appendPaired(dir: string, n: number): Promise<Pair[]> {
  const { fresh, once } = pairing(dir);
  await once(() => appendEngine(fresh(), WARMUP, 1, 'jsonl'));
  await once(() => appendBare(fresh(), WARMUP));
  const pairs: Pair[] = [];
  for (let p = 0; p < PAIRS; p++) {
    const bare = (): Promise<number> => once(() => appendBare(fresh(), n));
    const engine = (): Promise<number> => once(() => appendEngine(fresh(), n, 1, 'jsonl'));
    if (p % 2 === 0) {
      const b = await bare();
      pairs.push({ bare: b, engine: await engine() });
    } else {
      const e = await engine();
      pairs.push({ bare: await bare(), engine: e });
    }
  }
  return pairs;
}

/** Fresh files in `dir` for the runs of one process, and a run's rate per second. */
function pairing(dir: string): {
  fresh: () => string;
  once: (run: () => Timing | Promise<Timing>) => Promise<number>;
} {
  let made = 0;
  return {
    fresh: () => path.join(dir, `paired-${process.pid}-${made++}.jsonl`),
    once: async (run) => {
      const { count, seconds } = await run();
      return count / seconds;
    },
  };
}

/**
 * {@link PAIRS} rounds, as {@link appendPaired}'s pairs, of three runs in one warm process: the
 * bare loop, `appenders` appenders at once ({@link APPENDS} each), and group commit's limit, the
 * bare loop writing `appenders` lines per sync; each round starts with the next of the three.
 * On a shared disk, whose speed moves by several times from one process to the next, the
 * medians of the rounds' ratios say what the best runs of separate processes cannot.
 */
export async function groupPaired(dir: string, appenders: number): Promise<Pair[]> {
  const { fresh, once } = pairing(dir);
  const records = APPENDS * appenders;
  await once(() => appendEngine(fresh(), WARMUP * appenders, appenders, 'jsonl'));
  await once(() => appendBare(fresh(), WARMUP * appenders, appenders));
  const runs = [
    () => once(() => appendBare(fresh(), APPENDS)),
    () => once(() => appendEngine(fresh(), records, appenders, 'jsonl')),
    () => once(() => appendBare(fresh(), records, appenders)),
  ];
  const rounds: Pair[] = [];
  for (let p = 0; p < PAIRS; p++) {
    const rates: number[] = [];
    for (let r = 0; r < runs.length; r++) {
      const at = (p + r) % runs.length;
      rates[at] = await (runs[at] as () => Promise<number>)();
    }
    const [bare, engine, limit] = rates as [number, number, number];
    rounds.push({ bare, engine, limit });
  }
  return rounds;
}
