/**
 * The benchmark behind `make bench`: each figure of the engine is measured in the same run as
 * its physical limit on this machine, the bare loop that does only the unavoidable work, and
 * reported with the ratio of the two.
 *
 * - Replay: `Ledger.open(file, { readOnly: true })` of synthetic ledgers of 100k, 1M and 10M
 *   records, against `readFileSync` + `split('\n')` + `JSON.parse` of every line (at 10M, a file
 *   longer than a string can be, the same loop over 8 MiB chunks); and of the 1M ledger on 1, 2,
 *   4, ... threads up to all the machine gives (the curve: it runs unchanged on a bigger machine,
 *   and reports its curve there). Each replaying process then answers the queries memoryd makes
 *   at start, and reports its peak RSS.
 * - Appends: one appender awaiting each `ledger.append`, and 16 and 64 appenders at once (which
 *   the ledger group-commits), against a loop of `writeSync` + `fdatasyncSync` of the same lines;
 *   beside them the limit of group commit, the same loop writing 16 (64) lines per sync, and
 *   LevelDB's own, classic-level's synced batch writes of the same records with no ledger.
 * - The LevelDB backend (classic-level, in a folder beside the JSONL files), measured the same
 *   ways against the same bare loops: replay of the same ledgers (up to 1M) imported once into
 *   LevelDB, and appends to a fresh folder.
 * - The in-memory backend (`memory:`), for memoryd's tests: replay of the same records put in
 *   memory first (untimed), and appends with no I/O at all, beside the same bare loops.
 *
 * Every run is a fresh Node.js process, as memoryd's open at start is: no run inherits another's
 * heap, garbage or optimized code. Each figure is the best of {@link RUNS} runs. The results go
 * to `bench/results.json` and to the generated section of `docs/benchmarks.md`; nothing here
 * judges a figure.
 *
 * `node dist/bench/run.js` runs it all; `node dist/bench/run.js --appends` measures the appends
 * alone and keeps the replay figures of `bench/results.json`; `node dist/bench/run.js --docs`
 * writes the generated section again from `bench/results.json` without measuring (after a change
 * to what it says).
 * (`--measure <kind> ...` is how it runs one measurement in a child process.)
 *
 * @module
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { jsonlBackend } from '../backends/jsonl.js';
import { levelBackend } from '../backends/level/index.js';
import { encodeRecord as levelValueOf } from '../backends/level/values.js';
import { memoryBackend } from '../backends/memory.js';
import { fillLedger } from '../lib/copy.js';
import { encodeValid, honchoCodec } from '../lib/honcho/codec.js';
import type { Record } from '../lib/honcho/record.js';
import { Ledger } from '../lib/ledger.js';
import type { LogBackend } from '../lib/log.js';
import type { Target } from '../lib/target.js';
import {
  childSays,
  peakRssMiB,
  progress,
  progressDone,
  readThroughInChunks,
  startupQueries,
  syntheticLedger,
  writeGeneratedSection,
} from './common.js';
import { TARGETS } from './targets.js';
import { workload } from './workload.js';

/** How many times each measurement runs; the best run is kept. */
const RUNS = 3;
/** The ledgers replayed, in records. */
const REPLAY_SIZES = [100_000, 1_000_000, 10_000_000] as const;
/**
 * The largest ledger replayed every way (LevelDB, in memory, by hand, the thread curve); larger
 * ones are replayed from JSONL only, beside the chunked bare loop, which keeps `make bench` in
 * its time: importing 10M records into LevelDB, or holding them in memory, is most of it.
 */
const EVERY_WAY_UP_TO = 1_000_000;
const SEED = 1;
/** Appends per run of the single appender and of the bare loop, and per concurrent appender. */
const APPENDS = 3000;
/** The appenders of the group-commit rows: 16, and 64 (the JSONL file only). */
const APPENDERS = 16;
const MANY_APPENDERS = 64;
/** Untimed appends (per appender) before each timed append loop. */
const WARMUP = 500;
/** Pairs of the bare append loop and one appender, taking turns in one process. */
const PAIRS = 7;

const SCRIPT = fileURLToPath(import.meta.url);

/** The repository: the nearest folder above this file (in `dist/bench/`) with a package.json. */
function repositoryRoot(): string {
  for (let dir = path.dirname(SCRIPT); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${SCRIPT}`);
  }
}

// -- one measurement, in a child process ------------------------------------------------------

/** What a child reports: how many records it handled, in how many seconds; a replay, its peak RSS. */
interface Timing {
  readonly count: number;
  readonly seconds: number;
  /** The measuring process's peak RSS in MiB, after the replay and memoryd's start-up queries. */
  readonly peakMiB?: number;
  /** An engine's append loop: the CPU (user and system) the process spent in it, the cost on tmpfs. */
  readonly cpuSeconds?: number;
}

const now = (): number => performance.now() / 1000;

/** The first `n` records of the workload. */
function appendRecords(n: number): Record[] {
  return Array.from(workload({ records: n, seed: SEED }));
}

/**
 * The lines of the first `n` records of the workload as the ledger writes them, for the bare
 * loops. Made apart from the records: an engine's loop holds no lines, and a bare loop no
 * records, so that neither pays the other's garbage and live objects in its collections.
 */
function appendLines(n: number): Buffer[] {
  return appendRecords(n).map((r) => Buffer.from(`${encodeValid(r)}\n`, 'utf8'));
}

/** Reads the file, splits it into lines and `JSON.parse`s each: the least a replay must do. */
function replayBare(file: string): Timing {
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
function replayBareChunked(file: string): Timing {
  const start = now();
  const count = readThroughInChunks(file);
  return { count, seconds: now() - start };
}

/**
 * What a user would write by hand to replay the file: `readline` over a stream, `JSON.parse` of
 * each line, and each item's last record type in a `Map` keyed by the item's JSON (no checks).
 */
async function replayUser(file: string): Promise<Timing> {
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
type Flavor = 'jsonl' | 'level' | 'memory';

/** The ledger at `file` (a JSONL file, a LevelDB folder), or a fresh in-memory one. */
const ledgerAt = (file: string, flavor: Flavor): Target =>
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
async function replayEngine(file: string, flavor: Flavor, threads?: number): Promise<Timing> {
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

/**
 * One `pwrite` and one `fdatasync` per line, synchronously: the least a durable append costs.
 * With `linesPerSync`, that many lines (joined beforehand, untimed) per write and sync: the
 * least a group commit of batches that size costs, its limit.
 */
function appendBare(file: string, n: number, linesPerSync = 1): Timing {
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
async function appendLevelBare(folder: string, n: number, writers: number): Promise<Timing> {
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

/** Values asked of LevelDB's iterator at a time by {@link replayLevelBare}: 10,000 measured slower. */
const LEVEL_BARE_BATCH = 1000;
/** classic-level's bound on the bytes of one `nextv` (16 KiB by default, about 120 values here). */
const LEVEL_BARE_BATCH_BYTES = 1 << 20;

/**
 * LevelDB's own limit for a replay: classic-level alone, opening a copy of the LevelDB folder
 * (made untimed, as the engine's read-only open reads a copy) and reading every value through
 * its iterator, `nextv` of {@link LEVEL_BARE_BATCH} values at a time as views, no keys, no
 * block cache filled; nothing decoded, checked or kept. What is left of the bare JSONL loop's
 * time after it is all a LevelDB backend's replay has for everything else.
 */
async function replayLevelBare(folder: string): Promise<Timing> {
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

/** The same loop through the thread pool (`fs.promises`), for comparison with the synchronous calls. */
async function appendBareAsync(file: string, n: number): Promise<Timing> {
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
async function appendUser(file: string, n: number): Promise<Timing> {
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
async function appendEngine(file: string, n: number, appenders: number, flavor: Flavor): Promise<Timing> {
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

type Kind =
  | 'replay-bare'
  | 'replay-bare-chunked'
  | 'replay-engine'
  | 'replay-level'
  | 'replay-level-bare'
  | 'replay-memory'
  | 'replay-threads'
  | 'replay-user'
  | 'append-bare'
  | 'append-bare-batched'
  | 'append-level-bare'
  | 'append-user'
  | 'append-bare-async'
  | 'append-engine'
  | 'append-engine-concurrent'
  | 'append-level'
  | 'append-level-concurrent'
  | 'append-memory';

/** `appenders`: the callers at once of a `-concurrent` kind, the lines per sync of `append-bare-batched`, the writers of `append-level-bare`. */
async function measureOnce(kind: Kind, file: string, n: number, appenders: number): Promise<Timing> {
  switch (kind) {
    case 'replay-bare':
      return replayBare(file);
    case 'replay-bare-chunked':
      return replayBareChunked(file);
    case 'replay-engine':
      return replayEngine(file, 'jsonl');
    case 'replay-level':
      return replayEngine(file, 'level');
    case 'replay-level-bare':
      return replayLevelBare(file);
    case 'replay-memory':
      return replayEngine(file, 'memory');
    case 'replay-threads':
      return replayEngine(file, 'jsonl', n);
    case 'replay-user':
      return replayUser(file);
    case 'append-user':
      return appendUser(file, n);
    case 'append-bare':
      return appendBare(file, n);
    case 'append-bare-batched':
      return appendBare(file, n, appenders);
    case 'append-level-bare':
      return appendLevelBare(file, n, appenders);
    case 'append-bare-async':
      return appendBareAsync(file, n);
    case 'append-engine':
      return appendEngine(file, n, 1, 'jsonl');
    case 'append-engine-concurrent':
      return appendEngine(file, n, appenders, 'jsonl');
    case 'append-level':
      return appendEngine(file, n, 1, 'level');
    case 'append-level-concurrent':
      return appendEngine(file, n, appenders, 'level');
    case 'append-memory':
      return appendEngine(file, n, 1, 'memory');
  }
}

/**
 * One measurement. A replay runs cold, as memoryd's open at start does; appends come from a
 * long-running daemon, so each append loop first runs {@link WARMUP} appends to a file of its
 * own, untimed, and its figure is not that of code the JIT has not compiled yet.
 */
async function measure(kind: Kind, file: string, n: number, appenders: number): Promise<Timing> {
  if (kind.startsWith('append-')) {
    const warm = `${file}.warmup`;
    await measureOnce(kind, warm, Math.min(n, WARMUP * appenders), appenders);
    fs.rmSync(warm, { recursive: true, force: true }); // a LevelDB log is a folder; an in-memory one is nothing
  }
  const timing = await measureOnce(kind, file, n, appenders);
  // An in-memory replay's peak holds the untimed open of the file its records come from.
  return kind.startsWith('replay-') && kind !== 'replay-memory' ? { ...timing, peakMiB: peakRssMiB() } : timing;
}

/**
 * One pair: the bare loop's rate and one appender's, per second, run one after the other; for a
 * group, the rate of its appenders at once, and `limit`, the bare loop's writing as many lines
 * per sync.
 */
interface Pair {
  readonly bare: number;
  readonly engine: number;
  readonly limit?: number;
}

/**
 * {@link PAIRS} pairs of the bare loop and one appender awaiting each append, in one warm
 * process, taking turns (bare first, then engine first, ...), each on a fresh file in `dir`:
 * a drift of the disk's speed, which moves the bare loop by a third from one process to the
 * next on a virtual disk, then reaches both runs of a pair alike, and the median of the pairs'
 * ratios is the engine's share of the limit.
 */
async function appendPaired(dir: string, n: number): Promise<Pair[]> {
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
async function groupPaired(dir: string, appenders: number): Promise<Pair[]> {
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

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** Runs one measurement in a fresh Node.js process and gives what it reported. */
function inChild(kind: Kind, file: string, n: number, appenders: number): Promise<Timing> {
  return childSays<Timing>([SCRIPT, '--measure', kind, file, String(n), String(appenders)], `${kind} ${file}`);
}

// -- the whole run ----------------------------------------------------------------------------

/** A rate measured {@link RUNS} times: the best, and every run's, per second; a replay's peak RSS. */
interface Rate {
  readonly perSecond: number;
  readonly runs: readonly number[];
  /** The peak RSS (MiB) of the best run's process, and of every run's, where the run reports it. */
  readonly peakMiB?: number;
  readonly peaksMiB?: readonly number[];
}

interface ReplayResult {
  readonly records: number;
  readonly bytes: number;
  readonly bare: Rate;
  readonly engine: Rate;
  readonly ratio: number;
  /** The bare loop read the file in 8 MiB chunks (a file longer than a string can be). */
  readonly bareChunked?: boolean;
  /**
   * The same ledger in LevelDB (up to {@link EVERY_WAY_UP_TO}): the folder's size, and `Ledger.open` of it against the same
   * bare loop; `limit`: LevelDB's own, classic-level alone reading every value ({@link replayLevelBare}).
   */
  readonly level?: { readonly bytes: number; readonly engine: Rate; readonly ratio: number; readonly limit?: Limit };
  /** The same records in the in-memory backend (up to {@link EVERY_WAY_UP_TO}): `Ledger.open` of it against the same bare loop. */
  readonly memory?: { readonly engine: Rate; readonly ratio: number };
  /** The loop a user would write by hand (`readline`, `JSON.parse`, a `Map`), against the same bare loop. */
  readonly user?: { readonly engine: Rate; readonly ratio: number };
  /** Of the largest ledger, the JSONL replay on 1, 2, 4, ... threads (up to the machine's), against the same bare loop. */
  readonly threads?: readonly { readonly threads: number; readonly engine: Rate; readonly ratio: number }[];
}

/** The thread counts of the replay curve: 1, 2, 4, ... up to the machine's, and the machine's. */
function threadCounts(): number[] {
  const all = os.availableParallelism();
  const counts: number[] = [];
  for (let t = 1; t < all; t *= 2) counts.push(t);
  counts.push(all);
  return counts;
}

interface Results {
  readonly date: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
    readonly filesystem: string;
  };
  readonly method: string;
  readonly replay: readonly ReplayResult[];
  readonly append: {
    readonly records: number;
    readonly meanLineBytes: number;
    readonly bare: Rate;
    readonly bareAsync: Rate;
    /** The loop a user would write by hand (`appendFile` + `datasync` on a handle), against the same bare loop. */
    readonly user?: Rate;
    readonly engine: Rate;
    readonly ratio: number;
    /** One appender and the bare loop taking turns in one process: every pair, and the median of their ratios. */
    readonly paired: {
      readonly pairs: readonly Pair[];
      readonly bare: number;
      readonly engine: number;
      readonly ratio: number;
    };
    readonly concurrent: GroupCommit & {
      /** The LevelDB backend's figure, against the same bare loop; `limit`: LevelDB's own, as many writers at once. */
      readonly level: { readonly engine: Rate; readonly ratio: number; readonly limit?: Limit };
    };
    /** Group commit with {@link MANY_APPENDERS} appenders, the JSONL file. */
    readonly many?: GroupCommit;
    /** The LevelDB backend's figure, against the same bare loop; `limit`: LevelDB's own, one record per synced write. */
    readonly level: { readonly engine: Rate; readonly ratio: number; readonly limit?: Limit };
    /** The in-memory backend's figure (no I/O at all), against the same bare loop. */
    readonly memory: { readonly engine: Rate; readonly ratio: number };
  };
}

/**
 * What an engine's figure cannot pass, measured beside it: its rate, its ratio to the bare loop,
 * and `share`, the engine's rate over it (1.00: the engine reaches its limit).
 */
interface Limit {
  readonly engine: Rate;
  readonly ratio: number;
  readonly share: number;
}

/** Appenders at once, each awaiting its own appends, which the ledger group-commits. */
interface GroupCommit {
  readonly appenders: number;
  readonly records: number;
  readonly engine: Rate;
  readonly ratio: number;
  /** The bare loop writing `appenders` lines per write and sync: group commit's limit with batches that size. */
  readonly limit?: Limit;
  /**
   * The group, the bare loop and the limit taking turns in one process ({@link groupPaired}):
   * every round, the median of the rounds' ratios to the bare loop, and of their shares of the limit.
   */
  readonly paired?: {
    readonly rounds: readonly Pair[];
    readonly bare: number;
    readonly engine: number;
    readonly ratio: number;
    readonly share: number;
  };
}

/** The file system's name, from `statfs`'s magic number, for the record of where appends ran. */
function filesystemOf(dir: string): string {
  const names: { readonly [magic: number]: string } = {
    0xef53: 'ext4',
    0x58465342: 'xfs',
    0x9123683e: 'btrfs',
    0x01021994: 'tmpfs',
    0x794c7630: 'overlayfs',
    0x2fc12fc1: 'zfs',
    0x6969: 'nfs',
    0x65735546: 'fuse',
  };
  try {
    const type = fs.statfsSync(dir).type;
    return names[type] ?? `0x${type.toString(16)}`;
  } catch {
    return 'unknown';
  }
}

/** One measurement to repeat: what it is, how it runs, and how many records it must report. */
interface Spec {
  readonly label: string;
  readonly kind: Kind;
  readonly file: () => string;
  readonly n: number;
  readonly expected: number;
  /** The appenders (lines per sync, writers) of an append measurement; 1 when absent. */
  readonly appenders?: number;
}

/**
 * Runs each spec {@link RUNS} times, interleaved (all specs once, then again), so that a drift
 * in the machine's speed (a virtual disk's, say) reaches a figure and its limit alike.
 */
async function rates(specs: readonly Spec[]): Promise<Rate[]> {
  const runs: number[][] = specs.map(() => []);
  const peaks: number[][] = specs.map(() => []);
  for (let run = 1; run <= RUNS; run++) {
    for (const [s, spec] of specs.entries()) {
      progress(`${spec.label}: run ${run} of ${RUNS}`);
      const { count, seconds, peakMiB } = await inChild(spec.kind, spec.file(), spec.n, spec.appenders ?? 1);
      if (count !== spec.expected) throw new Error(`${spec.label}: ${count} records, not ${spec.expected}`);
      (runs[s] as number[]).push(Math.round(count / seconds));
      if (peakMiB !== undefined) (peaks[s] as number[]).push(peakMiB);
    }
  }
  return runs.map((r, s) => {
    const best = { perSecond: Math.max(...r), runs: r };
    const p = peaks[s] as number[];
    return p.length === r.length ? { ...best, peakMiB: p[r.indexOf(best.perSecond)] as number, peaksMiB: p } : best;
  });
}

const ratioOf = (a: Rate, b: Rate): number => Math.round((1000 * a.perSecond) / b.perSecond) / 1000;

/** The limit `rate` of the figure `of`, against the bare loop `bare`. */
const limitOf = (rate: Rate, of: Rate, bare: Rate): Limit => ({
  engine: rate,
  ratio: ratioOf(rate, bare),
  share: ratioOf(of, rate),
});

/**
 * The ledger `jsonl` imported into a LevelDB folder beside it, once, and kept for later runs
 * like the JSONL file. The import goes to `<folder>.tmp-<pid>`, renamed when whole.
 */
async function levelLedger(jsonl: string): Promise<{ folder: string; bytes: number }> {
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

const mib = (bytes: number): string => `${(bytes / (1 << 20)).toFixed(1)} MiB`;

function formatRate(perSecond: number): string {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)}M`;
  if (perSecond >= 1e4) return `${(perSecond / 1e3).toFixed(0)}k`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)}k`;
  return perSecond.toFixed(0);
}

const ratioText = (r: number): string => r.toFixed(2);

/** A replay's peak RSS, after its rate in the table, where it was measured. */
const peakText = (rate: Rate): string =>
  rate.peakMiB === undefined ? '' : `, peak RSS ${Math.round(rate.peakMiB)} MiB`;

/** A count of records: 100k, 1M. */
function formatCount(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** The rows of the results table: what, the engine's figure, its limit, the ratio, the target. */
function rows(results: Results): string[][] {
  const out: string[][] = [];
  for (const r of results.replay) {
    const peakTarget = r.records === TARGETS.replay.peakAt ? `; ≤ ${TARGETS.replay.peakMiB / 1024} GiB RSS` : '';
    out.push([
      `Replay ${formatCount(r.records)} records (${mib(r.bytes)}): \`Ledger.open\`, read-only`,
      `${formatRate(r.engine.perSecond)} records/s${peakText(r.engine)}`,
      `${formatRate(r.bare.perSecond)} records/s${r.bareChunked === true ? ' (in 8 MiB chunks)' : ''}`,
      ratioText(r.ratio),
      `≥ ${TARGETS.replay.jsonl.toFixed(2)}${peakTarget}`,
    ]);
    if (r.user !== undefined) {
      out.push([
        `Replay ${formatCount(r.records)} records by hand: \`readline\` + \`JSON.parse\` + a \`Map\` of item states (no checks)`,
        `${formatRate(r.user.engine.perSecond)} records/s`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(r.user.ratio),
        '—',
      ]);
    }
    for (const t of r.threads ?? []) {
      out.push([
        `Replay ${formatCount(r.records)} records on ${t.threads} thread${t.threads === 1 ? '' : 's'} in all (\`scan: { threads: ${t.threads} }\`)`,
        `${formatRate(t.engine.perSecond)} records/s`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(t.ratio),
        '—',
      ]);
    }
    if (r.level !== undefined) {
      out.push([
        `Replay ${formatCount(r.records)} records, LevelDB (${mib(r.level.bytes)} folder): \`Ledger.open\`, read-only`,
        `${formatRate(r.level.engine.perSecond)} records/s${peakText(r.level.engine)}`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(r.level.ratio),
        `≥ ${TARGETS.replay.level.toFixed(2)}`,
      ]);
      const own = r.level.limit;
      if (own !== undefined) {
        out.push([
          `LevelDB’s own limit: classic-level alone reading every value of the same folder (\`nextv\` of ${LEVEL_BARE_BATCH} as views, no keys; nothing decoded) (the row above reaches ${ratioText(own.share)} of it)`,
          `${formatRate(own.engine.perSecond)} records/s`,
          `${formatRate(r.bare.perSecond)} records/s`,
          ratioText(own.ratio),
          '—',
        ]);
      }
    }
    if (r.memory !== undefined) {
      out.push([
        `Replay ${formatCount(r.records)} records, in memory (\`memory:\`): \`Ledger.open\`, read-only`,
        `${formatRate(r.memory.engine.perSecond)} records/s`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(r.memory.ratio),
        '—',
      ]);
    }
  }
  const from = results.replay.find((r) => r.records === TARGETS.replay.rateHeldFrom);
  const largest = results.replay[results.replay.length - 1];
  if (from !== undefined && largest !== undefined && largest.records > from.records) {
    out.push([
      `Replay rate at ${formatCount(largest.records)} records against the rate at ${formatCount(from.records)} (the state must not slow down as it grows)`,
      `${formatRate(largest.engine.perSecond)} records/s`,
      `${formatRate(from.engine.perSecond)} records/s (at ${formatCount(from.records)})`,
      ratioText(ratioOf(largest.engine, from.engine)),
      `≥ ${TARGETS.replay.rateHeld.toFixed(2)}`,
    ]);
  }
  const a = results.append;
  out.push([
    `Append, 1 appender awaiting each (${a.records} records)`,
    `${formatRate(a.engine.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.ratio),
    '≥ 0.95',
  ]);
  out.push([
    `Append, 1 appender, paired with the bare loop in one process (median of ${a.paired.pairs.length} pairs of ${a.records} records)`,
    `${formatRate(a.paired.engine)} appends/s`,
    `${formatRate(a.paired.bare)} appends/s`,
    ratioText(a.paired.ratio),
    '≥ 0.95',
  ]);
  groupRows(out, a, a.concurrent, '≥ 14.0');
  if (a.many !== undefined) groupRows(out, a, a.many, '≥ 25.0');
  out.push([
    `Append, LevelDB, 1 appender awaiting each (${a.records} records)`,
    `${formatRate(a.level.engine.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.level.ratio),
    '≥ 0.80',
  ]);
  limitRow(out, a, a.level.limit, 'classic-level alone, a synced batch write per record', 'LevelDB’s own limit');
  out.push([
    `Append, LevelDB, ${a.concurrent.appenders} appenders at once, group commit (${a.concurrent.records} records)`,
    `${formatRate(a.concurrent.level.engine.perSecond)} records/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.concurrent.level.ratio),
    '≥ 10.0',
  ]);
  limitRow(
    out,
    a,
    a.concurrent.level.limit,
    `classic-level alone, ${a.concurrent.appenders} writers at once, each a synced batch write per record`,
    'LevelDB’s own limit',
  );
  out.push([
    `Append, in memory (\`memory:\`, no I/O), 1 appender awaiting each (${a.records} records)`,
    `${formatRate(a.memory.engine.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.memory.ratio),
    '—',
  ]);
  if (a.user !== undefined) {
    out.push([
      'Append by hand: `appendFile` + `datasync` on a file handle, 1 appender',
      `${formatRate(a.user.perSecond)} appends/s`,
      `${formatRate(a.bare.perSecond)} appends/s`,
      ratioText(ratioOf(a.user, a.bare)),
      '—',
    ]);
  }
  out.push([
    'For reference: the bare loop through the thread pool (`fs.promises`)',
    `${formatRate(a.bareAsync.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(ratioOf(a.bareAsync, a.bare)),
    '—',
  ]);
  return out;
}

/** A group commit's rows: its best of three, its limit's, and its rounds in one process, when they were measured. */
function groupRows(out: string[][], a: Results['append'], group: GroupCommit, target: string): void {
  out.push([
    `Append, ${group.appenders} appenders at once, group commit (${group.records} records)`,
    `${formatRate(group.engine.perSecond)} records/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(group.ratio),
    target,
  ]);
  limitRow(out, a, group.limit, `${group.appenders} lines per write + \`fdatasync\``);
  const p = group.paired;
  if (p === undefined) return;
  out.push([
    `Append, ${group.appenders} appenders, taking turns with the bare loop and the limit in one process (median of ${p.rounds.length} rounds; ${ratioText(p.share)} of the limit)`,
    `${formatRate(p.engine)} records/s`,
    `${formatRate(p.bare)} appends/s`,
    ratioText(p.ratio),
    target,
  ]);
}

/** The row of `limit`, measured beside the row before it (`what` it is), when it was. */
function limitRow(
  out: string[][],
  a: Results['append'],
  limit: Limit | undefined,
  what: string,
  name = 'Group commit’s limit',
): void {
  if (limit === undefined) return;
  out.push([
    `${name}: ${what} (the row above reaches ${ratioText(limit.share)} of it)`,
    `${formatRate(limit.engine.perSecond)} records/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(limit.ratio),
    '—',
  ]);
}

const HEADER = ['Measurement', 'Engine', 'Bare loop (limit)', 'Ratio', 'Target'];

function consoleTable(results: Results): string {
  const body = rows(results).map((row) => row.map((cell) => cell.replaceAll('`', '')));
  const widths = HEADER.map((h, c) => Math.max(h.length, ...body.map((row) => (row[c] as string).length)));
  const line = (row: readonly string[]): string =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number))).join('  ');
  return [line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function machineLine(results: Results): string {
  const m = results.machine;
  return `${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node.js ${m.node}, ${m.platform}, appends on ${m.filesystem}`;
}

function markdown(results: Results): string {
  const table = [HEADER, ['---', '---:', '---:', '---:', '---:'], ...rows(results)].map(
    (row) => `| ${row.join(' | ')} |`,
  );
  return [
    `Measured ${results.date.slice(0, 10)} on ${machineLine(results)}. ${results.method}.`,
    '',
    ...table,
    '',
    `LevelDB rows: the same ledgers imported once into a classic-level folder, and appends to a fresh one, against the same bare loops. Bare loops: replay is \`readFileSync\` + \`split('\\n')\` + \`JSON.parse\` of each line; append is \`writeSync\` + \`fdatasyncSync\` of each line (the same ${results.append.meanLineBytes}-byte lines on average that the engine writes). Every run's figures are in \`bench/results.json\`.`,
  ].join('\n');
}

/** Writes the figures of `results` into the generated section of docs/benchmarks.md. */
function writeDocs(root: string, results: Results): void {
  writeGeneratedSection(path.join(root, 'docs', 'benchmarks.md'), 'results', markdown(results), 'Results');
}

/**
 * The appends, each beside the bare loop, on fresh files and folders in `scratch`: one
 * appender, group commit with {@link APPENDERS} and {@link MANY_APPENDERS} appenders, each group
 * beside its limit, LevelDB beside its own, and the loops by hand and for reference; then the
 * pairs of one appender and the bare loop in one process.
 */
async function measureAppends(scratch: string): Promise<Results['append']> {
  let fresh = 0;
  const freshFile = (): string => path.join(scratch, `append-${fresh++}.jsonl`);
  const freshFolder = (): string => path.join(scratch, `append-${fresh++}.level`);
  const lines = appendLines(APPENDS);
  const meanLineBytes = Math.round(lines.reduce((sum, line) => sum + line.length, 0) / lines.length);
  const concurrentRecords = APPENDS * APPENDERS;
  const manyRecords = APPENDS * MANY_APPENDERS;
  const one = (label: string, kind: Kind, file: () => string): Spec => ({
    label: `append: ${label}`,
    kind,
    file,
    n: APPENDS,
    expected: APPENDS,
  });
  const group = (label: string, kind: Kind, file: () => string, appenders: number): Spec => ({
    label: `append: ${label}`,
    kind,
    file,
    n: APPENDS * appenders,
    expected: APPENDS * appenders,
    appenders,
  });
  const [
    bare,
    bareAsync,
    engine,
    concurrent,
    concurrentLimit,
    many,
    manyLimit,
    level,
    levelLimit,
    levelConcurrent,
    levelConcurrentLimit,
    memory,
    user,
  ] = (await rates([
    one('bare write+fdatasync loop', 'append-bare', freshFile),
    one('bare loop through the thread pool', 'append-bare-async', freshFile),
    one('Ledger.append, 1 appender', 'append-engine', freshFile),
    group(`Ledger.append, ${APPENDERS} appenders`, 'append-engine-concurrent', freshFile, APPENDERS),
    group(`bare loop, ${APPENDERS} lines per sync`, 'append-bare-batched', freshFile, APPENDERS),
    group(`Ledger.append, ${MANY_APPENDERS} appenders`, 'append-engine-concurrent', freshFile, MANY_APPENDERS),
    group(`bare loop, ${MANY_APPENDERS} lines per sync`, 'append-bare-batched', freshFile, MANY_APPENDERS),
    one('Ledger.append, LevelDB, 1 appender', 'append-level', freshFolder),
    one('classic-level alone, 1 writer', 'append-level-bare', freshFolder),
    group(`Ledger.append, LevelDB, ${APPENDERS} appenders`, 'append-level-concurrent', freshFolder, APPENDERS),
    group(`classic-level alone, ${APPENDERS} writers`, 'append-level-bare', freshFolder, APPENDERS),
    one('Ledger.append, in memory, 1 appender', 'append-memory', freshFile),
    one('appendFile + datasync, by hand', 'append-user', freshFile),
  ])) as [Rate, Rate, Rate, Rate, Rate, Rate, Rate, Rate, Rate, Rate, Rate, Rate, Rate];
  progress('append: the bare loop and 1 appender, paired');
  const pairs = await childSays<Pair[]>([SCRIPT, '--paired', scratch, String(APPENDS)], 'paired appends');
  const paired = {
    pairs,
    bare: Math.round(median(pairs.map((p) => p.bare))),
    engine: Math.round(median(pairs.map((p) => p.engine))),
    ratio: Math.round(1000 * median(pairs.map((p) => p.engine / p.bare))) / 1000,
  };
  const groupsPaired: NonNullable<GroupCommit['paired']>[] = [];
  for (const appenders of [APPENDERS, MANY_APPENDERS]) {
    progress(`append: ${appenders} appenders, the bare loop and the limit, paired`);
    const rounds = await childSays<Pair[]>(
      [SCRIPT, '--group-paired', scratch, String(appenders)],
      `paired appends, ${appenders} appenders`,
    );
    groupsPaired.push({
      rounds,
      bare: Math.round(median(rounds.map((p) => p.bare))),
      engine: Math.round(median(rounds.map((p) => p.engine))),
      ratio: Math.round(1000 * median(rounds.map((p) => p.engine / p.bare))) / 1000,
      share: Math.round(1000 * median(rounds.map((p) => p.engine / (p.limit as number)))) / 1000,
    });
  }
  const limit = (rate: Rate, of: Rate): Limit => limitOf(rate, of, bare);
  return {
    records: APPENDS,
    meanLineBytes,
    bare,
    bareAsync,
    user,
    engine,
    ratio: ratioOf(engine, bare),
    paired,
    concurrent: {
      appenders: APPENDERS,
      records: concurrentRecords,
      engine: concurrent,
      ratio: ratioOf(concurrent, bare),
      limit: limit(concurrentLimit, concurrent),
      paired: groupsPaired[0],
      level: {
        engine: levelConcurrent,
        ratio: ratioOf(levelConcurrent, bare),
        limit: limit(levelConcurrentLimit, levelConcurrent),
      },
    },
    many: {
      appenders: MANY_APPENDERS,
      records: manyRecords,
      engine: many,
      ratio: ratioOf(many, bare),
      limit: limit(manyLimit, many),
      paired: groupsPaired[1],
    },
    level: { engine: level, ratio: ratioOf(level, bare), limit: limit(levelLimit, level) },
    memory: { engine: memory, ratio: ratioOf(memory, bare) },
  };
}

/** Measures it all, or with `appendsOnly` the appends alone (the replays of `bench/results.json` kept). */
async function main(appendsOnly: boolean): Promise<void> {
  const root = repositoryRoot();
  const dataDir = path.join(root, 'bench', 'data');
  const resultsFile = path.join(root, 'bench', 'results.json');
  fs.mkdirSync(dataDir, { recursive: true });
  // Appends go to the same file system as the repository (not os.tmpdir(), often a tmpfs where
  // fdatasync costs nothing), bare loop and engine alike.
  const scratch = fs.mkdtempSync(path.join(dataDir, 'appends-'));
  const cleanUp = (): void => {
    fs.rmSync(scratch, { recursive: true, force: true });
    for (const name of fs.readdirSync(dataDir)) {
      if (name.endsWith(`.tmp-${process.pid}`)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    }
  };
  const interrupted = (): void => {
    progressDone();
    cleanUp();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    // with `--appends`, the replays of the results file are kept as they are
    const replay: ReplayResult[] = appendsOnly
      ? (JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Results).replay.slice()
      : [];
    for (const records of appendsOnly ? [] : REPLAY_SIZES) {
      const { file, bytes } = await syntheticLedger(dataDir, records, SEED);
      const label = `replay ${formatCount(records)}`;
      if (records > EVERY_WAY_UP_TO) {
        const [bare, engine] = (await rates([
          {
            label: `${label}: bare JSON.parse loop, in chunks`,
            kind: 'replay-bare-chunked',
            file: () => file,
            n: 0,
            expected: records,
          },
          { label: `${label}: Ledger.open`, kind: 'replay-engine', file: () => file, n: 0, expected: records },
        ])) as [Rate, Rate];
        replay.push({ records, bytes, bare, bareChunked: true, engine, ratio: ratioOf(engine, bare) });
        continue;
      }
      const { folder, bytes: levelBytes } = await levelLedger(file);
      // the thread curve of the 1M ledger only: the smaller starts no worker, the larger takes too long
      const curve = records === EVERY_WAY_UP_TO ? threadCounts() : [];
      const [bare, engine, level, levelLimit, memory, user, ...threaded] = (await rates([
        { label: `${label}: bare JSON.parse loop`, kind: 'replay-bare', file: () => file, n: 0, expected: records },
        { label: `${label}: Ledger.open`, kind: 'replay-engine', file: () => file, n: 0, expected: records },
        { label: `${label}: Ledger.open, LevelDB`, kind: 'replay-level', file: () => folder, n: 0, expected: records },
        {
          label: `${label}: classic-level alone`,
          kind: 'replay-level-bare',
          file: () => folder,
          n: 0,
          expected: records,
        },
        { label: `${label}: Ledger.open, in memory`, kind: 'replay-memory', file: () => file, n: 0, expected: records },
        {
          label: `${label}: readline + JSON.parse + Map`,
          kind: 'replay-user',
          file: () => file,
          n: 0,
          expected: records,
        },
        ...curve.map(
          (threads): Spec => ({
            label: `${label}: Ledger.open on ${threads} thread${threads === 1 ? '' : 's'}`,
            kind: 'replay-threads',
            file: () => file,
            n: threads,
            expected: records,
          }),
        ),
      ])) as [Rate, Rate, Rate, Rate, Rate, Rate, ...Rate[]];
      replay.push({
        user: { engine: user, ratio: ratioOf(user, bare) },
        threads: curve.map((threads, t) => {
          const rate = threaded[t] as Rate;
          return { threads, engine: rate, ratio: ratioOf(rate, bare) };
        }),
        records,
        bytes,
        bare,
        engine,
        ratio: ratioOf(engine, bare),
        level: {
          bytes: levelBytes,
          engine: level,
          ratio: ratioOf(level, bare),
          limit: limitOf(levelLimit, level, bare),
        },
        memory: { engine: memory, ratio: ratioOf(memory, bare) },
      });
    }
    const append = await measureAppends(scratch);
    progressDone();
    const cpus = os.cpus();
    const results: Results = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.availableParallelism(),
        cpuModel: cpus[0]?.model.trim() ?? 'unknown',
        memoryGiB: Math.round(os.totalmem() / (1 << 30)),
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        filesystem: filesystemOf(scratch),
      },
      method: `Each figure is the best of ${RUNS} runs, each run in a fresh Node.js process, the runs of a figure and of its limit taking turns`,
      replay,
      append,
    };
    console.log(`${machineLine(results)}.\n${results.method}.\n`);
    console.log(consoleTable(results));
    fs.writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    writeDocs(root, results);
    console.log('\nwrote bench/results.json and the results section of docs/benchmarks.md');
  } finally {
    progressDone();
    cleanUp();
  }
}

const KINDS: readonly Kind[] = [
  'replay-bare',
  'replay-bare-chunked',
  'replay-engine',
  'replay-level',
  'replay-level-bare',
  'replay-memory',
  'replay-threads',
  'replay-user',
  'append-bare',
  'append-bare-batched',
  'append-level-bare',
  'append-user',
  'append-bare-async',
  'append-engine',
  'append-engine-concurrent',
  'append-level',
  'append-level-concurrent',
  'append-memory',
];

if (process.argv[2] === '--measure') {
  const [kind, file, n, appenders = '1'] = process.argv.slice(3);
  if (!KINDS.includes(kind as Kind) || file === undefined)
    throw new Error(`usage: run.js --measure <${KINDS.join('|')}> <file> <n> [<appenders>]`);
  process.stdout.write(JSON.stringify(await measure(kind as Kind, file, Number(n), Number(appenders))));
} else if (process.argv[2] === '--docs') {
  const root = repositoryRoot();
  writeDocs(root, JSON.parse(fs.readFileSync(path.join(root, 'bench', 'results.json'), 'utf8')) as Results);
} else if (process.argv[2] === '--group-paired') {
  const [dir, appenders] = process.argv.slice(3);
  if (dir === undefined || appenders === undefined) throw new Error('usage: run.js --group-paired <dir> <appenders>');
  process.stdout.write(JSON.stringify(await groupPaired(dir, Number(appenders))));
} else if (process.argv[2] === '--paired') {
  const [dir, n] = process.argv.slice(3);
  if (dir === undefined || n === undefined) throw new Error('usage: run.js --paired <dir> <n>');
  process.stdout.write(JSON.stringify(await appendPaired(dir, Number(n))));
} else {
  await main(process.argv[2] === '--appends');
}
