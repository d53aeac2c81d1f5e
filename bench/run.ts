/**
 * The benchmark behind `make bench`: each figure of the engine is measured in the same run as
 * its physical limit on this machine, the bare loop that does only the unavoidable work, and
 * reported with the ratio of the two. This file runs it all; what it measures is in
 * `measure-replay.ts`, `measure-append.ts` and `measure-points.ts` (each run in a fresh process,
 * `measure.ts`, repeated by `runs.ts`); the shape of what it writes is `results-schema.ts`; the
 * table, `report.ts`.
 *
 * - Replay: `Ledger.open(file, { readOnly: true })` of synthetic ledgers of 100k, 1M and 10M
 *   records, against `readFileSync` + `split('\n')` + `JSON.parse` of every line (at 10M, a file
 *   longer than a string can be, the same loop over 8 MiB chunks); and of the 1M ledger on 1, 2,
 *   4, ... threads up to all the machine gives. Each replaying process then answers the queries
 *   memoryd makes at start, and reports its peak RSS.
 * - The LevelDB backend (classic-level, in a folder beside the JSONL files): replay of the same
 *   ledgers (up to 1M) imported once into LevelDB, against the same bare loop and against
 *   classic-level's own bare iterator loop over the same folder's values; appends to a fresh
 *   folder.
 * - The in-memory backend (`memory:`): replay of the same records put in memory first
 *   (untimed), and appends with no I/O at all, beside the same bare loops.
 * - Point queries: `isDecided`, `sentIds` and `conclusion` on a 200,000-record ledger, JSONL and
 *   LevelDB, each beside the backend's bare point read (a `pread` of one line; a `get` of one
 *   key), in µs per query.
 * - Appends: one appender awaiting each `ledger.append`, and 16 and 64 appenders at once (which
 *   the ledger group-commits), against a loop of `writeSync` + `fdatasyncSync` of the same lines;
 *   beside them the limit of group commit, the same loop writing 16 (64) lines per sync, and
 *   LevelDB's own, classic-level's synced batch writes of the same records with no ledger.
 *
 * Each figure is the best of {@link RUNS} runs. The results go to `bench/results.json` and to
 * the generated section of `docs/benchmarks.md`; each row says its goal and whether it is met.
 *
 * `node dist/bench/run.js` runs it all; `--appends` measures the appends alone and keeps the
 * other figures of `bench/results.json`; `--docs` writes the generated section again from
 * `bench/results.json` without measuring; `--points [<records>]` measures the point queries
 * alone (on a ledger of so many records) and prints them, writing nothing.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, progressDone, SEED, syntheticLedger } from './common.js';
import type { Kind } from './measure.js';
import { APPENDERS, APPENDS, appendLines, MANY_APPENDERS } from './measure-append.js';
import { levelLedger } from './measure-replay.js';
import { consoleTable, formatCount, machineLine, writeDocs } from './report.js';
import {
  type GroupCommit,
  type Limit,
  limitOf,
  type PointBackend,
  type PointQueries,
  type Rate,
  type ReplayResult,
  type Results,
  ratioOf,
} from './results-schema.js';
import { median, pairsInChild, RUNS, rates, type Spec } from './runs.js';

/** The ledgers replayed, in records. */
const REPLAY_SIZES = [100_000, 1_000_000, 10_000_000] as const;
/**
 * The largest ledger replayed every way (LevelDB, in memory, by hand, the thread curve); larger
 * ones are replayed from JSONL only, beside the chunked bare loop, which keeps `make bench` in
 * its time: importing 10M records into LevelDB, or holding them in memory, is most of it.
 */
const EVERY_WAY_UP_TO = 1_000_000;
/** The ledger of the point queries, in records, and the queries of each kind per run (at most: runs have a time budget). */
const POINT_RECORDS = 200_000;
const POINT_QUERIES = 2000;

const SCRIPT = fileURLToPath(import.meta.url);

/** The repository: the nearest folder above this file (in `dist/bench/`) with a package.json. */
function repositoryRoot(): string {
  for (let dir = path.dirname(SCRIPT); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${SCRIPT}`);
  }
}

/** The thread counts of the replay curve: 1, 2, 4, ... up to the machine's, and the machine's. */
function threadCounts(): number[] {
  const all = os.availableParallelism();
  const counts: number[] = [];
  for (let t = 1; t < all; t *= 2) counts.push(t);
  counts.push(all);
  return counts;
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
  const pairs = await pairsInChild('--paired', scratch, APPENDS);
  const paired = {
    pairs,
    bare: Math.round(median(pairs.map((p) => p.bare))),
    engine: Math.round(median(pairs.map((p) => p.engine))),
    ratio: Math.round(1000 * median(pairs.map((p) => p.engine / p.bare))) / 1000,
  };
  const groupsPaired: NonNullable<GroupCommit['paired']>[] = [];
  for (const appenders of [APPENDERS, MANY_APPENDERS]) {
    progress(`append: ${appenders} appenders, the bare loop and the limit, paired`);
    const rounds = await pairsInChild('--group-paired', scratch, appenders);
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

/**
 * The replays of every size of {@link REPLAY_SIZES}, each beside the bare loop; up to
 * {@link EVERY_WAY_UP_TO}, every backend, the loop by hand, and LevelDB beside its own bare
 * iterator loop; at {@link EVERY_WAY_UP_TO}, the thread curve.
 */
async function measureReplays(dataDir: string): Promise<ReplayResult[]> {
  const replay: ReplayResult[] = [];
  for (const records of REPLAY_SIZES) {
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
  return replay;
}

/**
 * The point queries on a ledger of `records` records, JSONL and LevelDB, each query beside the
 * backend's bare point read, their runs taking turns.
 */
async function measurePoints(dataDir: string, records: number): Promise<PointQueries> {
  const { file } = await syntheticLedger(dataDir, records, SEED);
  const { folder } = await levelLedger(file);
  const queries = [
    ['isDecided', 'point-is-decided'],
    ['sentIds', 'point-sent-ids'],
    ['conclusion', 'point-conclusion'],
  ] as const;
  const backends: PointBackend[] = [];
  for (const [backend, at] of [
    ['jsonl', file],
    ['level', folder],
  ] as const) {
    const spec = (what: string, kind: Kind): Spec => ({
      label: `points ${formatCount(records)}, ${backend}: ${what}`,
      kind,
      file: () => at,
      n: POINT_QUERIES,
    });
    const [bare, ...engines] = (await rates([
      spec('bare point read', 'point-bare'),
      ...queries.map(([query, kind]) => spec(query, kind)),
    ])) as [Rate, ...Rate[]];
    backends.push({
      backend,
      bare,
      queries: queries.map(([query], q) => {
        const engine = engines[q] as Rate;
        return {
          query,
          engine,
          micros: Math.round(1e7 / engine.perSecond) / 10,
          timesBare: Math.round((1000 * bare.perSecond) / engine.perSecond) / 1000,
        };
      }),
    });
  }
  return { records, queries: POINT_QUERIES, backends };
}

/** The machine the figures were measured on; `scratch`, where the appends ran. */
function machine(scratch: string): Results['machine'] {
  const cpus = os.cpus();
  return {
    cpus: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / (1 << 30)),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    filesystem: filesystemOf(scratch),
  };
}

/**
 * Measures it all; with `only: 'appends'` the appends alone (the other figures of
 * `bench/results.json` kept); with `only: 'points'`, the point queries alone on a ledger of
 * `pointRecords` records, printed and written nowhere (a check of the rows at a small size).
 */
async function main(only: 'appends' | 'points' | undefined, pointRecords = POINT_RECORDS): Promise<void> {
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
    const method = `Each figure is the best of ${RUNS} runs, each run in a fresh Node.js process, the runs of a figure and of its limit taking turns`;
    if (only === 'points') {
      const points = await measurePoints(dataDir, pointRecords);
      progressDone();
      const kept = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Results;
      const results: Results = {
        ...kept,
        replay: [],
        date: new Date().toISOString(),
        machine: machine(scratch),
        points,
      };
      console.log(consoleTable(results, { pointsOnly: true }));
      return;
    }
    // with `--appends`, the other figures of the results file are kept as they are
    const kept = only === 'appends' ? (JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Results) : undefined;
    const replay = kept?.replay ?? (await measureReplays(dataDir));
    const points = kept === undefined ? await measurePoints(dataDir, POINT_RECORDS) : kept.points;
    const append = await measureAppends(scratch);
    progressDone();
    const results: Results = {
      date: new Date().toISOString(),
      machine: machine(scratch),
      method,
      replay,
      append,
      ...(points === undefined ? {} : { points }),
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

if (process.argv[2] === '--docs') {
  const root = repositoryRoot();
  writeDocs(root, JSON.parse(fs.readFileSync(path.join(root, 'bench', 'results.json'), 'utf8')) as Results);
} else if (process.argv[2] === '--points') {
  await main('points', process.argv[3] === undefined ? POINT_RECORDS : Number(process.argv[3]));
} else {
  await main(process.argv[2] === '--appends' ? 'appends' : undefined);
}
