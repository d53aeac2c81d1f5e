/**
 * The read model's benchmark, the second half of `make bench`: what the LevelDB read model
 * (`Ledger.open(file, { index })`) buys a large ledger, side by side with the in-memory replay
 * it replaces, measured in the same run.
 *
 * For synthetic ledgers of 100k, 1M and 10M records (`bench/workload.ts`):
 * - the cold build of the read model from the log (records/s);
 * - the warm open of an up-to-date read model (ms), and the RSS of the process after it and a
 *   few queries (the counts, a page of the outbox, sent ids, conclusions, some decisions);
 * - the catch-up of 1,000 records appended since the checkpoint (ms), on a copy of a read model
 *   as a restart finds its own (its tables checked at an earlier open), beside its own bare loop:
 *   a fresh process that opens the copy's LevelDB database, reads the 1,000 lines from their
 *   offset, gives each to `JSON.parse` and writes a row of each in one synced batch;
 * - the in-memory replay (`Ledger.open(file)` without a read model): its time and RSS;
 * - the bare loop of `bench/run.ts` (read, split, `JSON.parse`), the physical limit of reading
 *   the ledger through, beside the cold build and the replay, as a ratio.
 *
 * Each figure is taken in a fresh Node.js process (a warm open is what memoryd does at start),
 * best of 3 except the builds and the 10M replay, which run once. The read model's targets: a
 * warm open of 10M within 2x that of 100k, at least 100x faster than replaying 10M in memory,
 * and under 256 MB of RSS; a cold build of 10M at 0.33 of its bare loop or better; a catch-up
 * of 1,000 in 20 ms or less. Results go to `bench/index-results.json` and to generated sections of
 * `docs/benchmarks.md` (the table) and `docs/read-model.md` (its summary); nothing here judges a
 * figure.
 *
 * `node dist/bench/read-model.js [--sizes 100000,1000000]` runs it; `--docs` writes the
 * generated sections again from `bench/index-results.json` without measuring.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { Ledger } from '../lib/ledger.js';
import { ModelFolder } from '../lib/projections/folder.js';
import {
  benchData,
  childSays,
  peakRssMiB,
  progress,
  progressDone,
  readThroughInChunks,
  startupQueries,
  syntheticLedger,
  writeGeneratedSection,
} from './common.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');
const DATA = benchData(ROOT);
const SEED = 1;
const BEHIND = 1000;
const RUNS = 3;

/** What a measuring process reports. */
interface Measured {
  readonly records: number;
  readonly ms: number;
  /** RSS after the open and the queries, and the process's peak, in MiB. */
  readonly rssMiB: number;
  readonly peakMiB: number;
  /**
   * The CPU time of the process (user and system, every thread) over the same span as `ms`: on a
   * machine shared with other work, what the span cost rather than how long it waited for a core.
   * Absent in runs before it was measured.
   */
  readonly cpuMs?: number;
}

const mib = (bytes: number): number => Math.round((bytes / (1 << 20)) * 10) / 10;

/**
 * The catch-up's bare loop: opens the LevelDB database in `folder`, reads `file` from byte
 * `offset` to its end, gives each line to `JSON.parse` and writes it as a row in one synced
 * batch. Gives the number of lines.
 */
async function bareCatchUp(file: string, folder: string, offset: number): Promise<number> {
  const db = new ClassicLevel<Buffer, Buffer>(folder, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open({ createIfMissing: false });
  try {
    const fd = fs.openSync(file, 'r');
    let tail: Buffer;
    try {
      tail = Buffer.allocUnsafe(fs.fstatSync(fd).size - offset);
      fs.readSync(fd, tail, 0, tail.length, offset);
    } finally {
      fs.closeSync(fd);
    }
    const lines = tail.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const batch = db.batch();
    for (const [n, line] of lines.entries()) {
      JSON.parse(line);
      batch.put(Buffer.from(`bare-${n}`), Buffer.from(line));
    }
    await batch.write({ sync: true });
    return lines.length;
  } finally {
    await db.close();
  }
}

/** The process's CPU time so far, every thread, in ms. */
const cpuNow = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const measured = (records: number, start: number, cpuStart: number): Measured => ({
  records,
  ms: performance.now() - start,
  cpuMs: cpuNow() - cpuStart,
  rssMiB: mib(process.memoryUsage().rss),
  peakMiB: peakRssMiB(),
});

/** One measurement, in this (child) process. */
async function measure(kind: string, file: string, index: string, offset: number): Promise<Measured> {
  const cpuStart = cpuNow();
  if (kind === 'bare') {
    const start = performance.now();
    return measured(readThroughInChunks(file), start, cpuStart);
  }
  if (kind === 'bare-catchup') {
    const start = performance.now();
    return measured(await bareCatchUp(file, index, offset), start, cpuStart);
  }
  const start = performance.now();
  const ledger = await Ledger.open(
    file,
    // the build is measured in the open, as `index build` runs it (not in the background)
    kind === 'memory' ? { readOnly: true } : { readOnly: true, index, waitForIndex: true, onNotice: () => undefined },
  );
  const ms = performance.now() - start;
  const cpuMs = cpuNow() - cpuStart;
  await startupQueries(ledger);
  const records = ledger.size;
  const rssMiB = mib(process.memoryUsage().rss);
  await ledger.close();
  return { records, ms, cpuMs, rssMiB, peakMiB: peakRssMiB() };
}

function inChild(kind: string, file: string, index: string, offset = 0): Promise<Measured> {
  // A replay of 10M records holds more than V8's default heap (about 4 GiB here): give the
  // replay room, so that it is measured rather than killed; the read model needs none.
  const heap = kind === 'memory' ? [`--max-old-space-size=${16 << 10}`] : [];
  return childSays<Measured>([...heap, SCRIPT, '--measure', kind, file, index, String(offset)], `${kind} ${file}`);
}

/** The byte offset after the first `lines` lines of `file`. */
function offsetAfterLines(file: string, lines: number): number {
  const fd = fs.openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(8 << 20);
  let seen = 0;
  let position = 0;
  try {
    for (;;) {
      const got = fs.readSync(fd, buffer, 0, buffer.length, position);
      if (got === 0) throw new Error(`${file}: fewer than ${lines} lines`);
      for (let at = buffer.indexOf(10); at !== -1 && at < got; at = buffer.indexOf(10, at + 1)) {
        if (++seen === lines) return position + at + 1;
      }
      position += got;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A read model of `file` as it was {@link BEHIND} records ago, kept in bench/data: built on a
 * copy of the file's first records, whose lines are the file's, so that its checkpoint holds
 * in the whole file and an open catches up the rest.
 */
async function behindIndex(file: string, records: number): Promise<string> {
  const index = file.replace(/\.jsonl$/, '.behind.index');
  if (fs.existsSync(path.join(index, 'LEDGERSTORE'))) return index;
  const prefix = `${file}.prefix-${process.pid}`;
  progress(`building ${index}`);
  try {
    fs.copyFileSync(file, prefix);
    fs.truncateSync(prefix, offsetAfterLines(file, records - BEHIND));
    const ledger = await Ledger.open(prefix, { readOnly: true, index, waitForIndex: true, onNotice: () => undefined });
    await ledger.close();
  } finally {
    fs.rmSync(prefix, { force: true });
  }
  return index;
}

/**
 * Copies the read model `behind` to `target` as a restart finds its own: a copy's table files are
 * new to the stamps that say which tables were checked already, so each database of it is opened
 * (without its log) until there is nothing left to check: once for its tables, once more for the
 * table LevelDB's open makes of its write-ahead log. Gives the folder of its database.
 */
async function restartedCopy(behind: string, target: string): Promise<string> {
  fs.cpSync(behind, target, { recursive: true });
  const { model } = await ModelFolder.open(target);
  try {
    const names = [...new Set(model.registry.generations.flatMap((g) => (g.db === null ? [] : [g.db])))];
    if (names.length !== 1) throw new Error(`${behind}: ${names.length} databases, not the one of a built read model`);
    for (let open = 0; open < 2; open++) await (await model.openDatabase(names[0] as string)).database.close();
    return model.pathOf(names[0] as string);
  } finally {
    model.close();
  }
}

interface SizeResult {
  readonly records: number;
  readonly bytes: number;
  readonly build: {
    readonly recordsPerSecond: number;
    readonly ms: number;
    readonly peakMiB: number;
    /** See {@link Measured.cpuMs}. */
    readonly cpuMs?: number;
  };
  readonly warm: Measured;
  readonly catchUp: Measured;
  /** The catch-up's bare loop: the 1,000 lines read from their offset, parsed, written in one synced batch (absent in runs before it was measured). */
  readonly catchUpBare?: Measured;
  readonly memory: Measured;
  /** The bare read + split + JSON.parse loop over the same file: the limit of any replay. */
  readonly bare: Measured;
}

async function best(
  kind: string,
  file: string,
  index: () => string | Promise<string>,
  runs: number,
  offset = 0,
): Promise<Measured> {
  let winner: Measured | null = null;
  for (let run = 0; run < runs; run++) {
    const got = await inChild(kind, file, await index(), offset);
    if (winner === null || got.ms < winner.ms) winner = got;
  }
  return winner as Measured;
}

async function measureSize(records: number, scratch: string): Promise<SizeResult> {
  const { file } = await syntheticLedger(DATA, records, SEED);
  const bytes = fs.statSync(file).size;
  const index = file.replace(/\.jsonl$/, '.index');
  progress(`${records}: cold build`);
  fs.rmSync(index, { recursive: true, force: true });
  const build = await inChild('build', file, index);
  progress(`${records}: warm opens`);
  const warm = await best('warm', file, () => index, RUNS);
  const behind = await behindIndex(file, records);
  let copies = 0;
  const copy = (): Promise<string> => restartedCopy(behind, path.join(scratch, `catch-up-${copies++}`));
  progress(`${records}: catch-ups`);
  // the engine opens the read model's folder; its bare loop, the LevelDB database in it
  const catchUp = await best('catchup', file, async () => path.dirname(await copy()), RUNS);
  const offset = offsetAfterLines(file, records - BEHIND);
  const catchUpBare = await best('bare-catchup', file, copy, RUNS, offset);
  if (catchUpBare.records !== BEHIND)
    throw new Error(`${file}: the catch-up's bare loop read ${catchUpBare.records} lines`);
  progress(`${records}: in-memory replays`);
  const memory = await best('memory', file, () => '', records >= 10_000_000 ? 1 : RUNS);
  progress(`${records}: bare loops`);
  const bare = await best('bare', file, () => '', RUNS);
  if (bare.records !== records) throw new Error(`${file}: the bare loop read ${bare.records} lines, not ${records}`);
  return {
    records,
    bytes,
    build: {
      recordsPerSecond: Math.round(records / (build.ms / 1000)),
      ms: build.ms,
      peakMiB: build.peakMiB,
      ...(build.cpuMs === undefined ? {} : { cpuMs: build.cpuMs }),
    },
    warm,
    catchUp,
    catchUpBare,
    memory,
    bare,
  };
}

const count = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);
const ms = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);

function table(results: readonly SizeResult[]): string[] {
  const rows = [
    '| Ledger | Bare loop (limit) | Cold build | Ratio | In-memory replay | Ratio | Its RSS | Warm open | Catch-up of 1,000 | Its bare loop | RSS after warm open + queries | Warm open vs replay |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    rows.push(
      `| ${count(r.records)} records (${mib(r.bytes)} MiB) | ${ms(r.bare.ms)} | ${ms(r.build.ms)} | ${(r.bare.ms / r.build.ms).toFixed(2)} | ${ms(r.memory.ms)} | ${(r.bare.ms / r.memory.ms).toFixed(2)} | ${r.memory.rssMiB} MiB | ${ms(r.warm.ms)} | ${ms(r.catchUp.ms)} | ${r.catchUpBare === undefined ? 'not measured' : ms(r.catchUpBare.ms)} | ${r.warm.rssMiB} MiB | ${Math.round(r.memory.ms / r.warm.ms)}x faster |`,
    );
  }
  return rows;
}

/** The CPU time of the same spans (every thread of the process), where a run measured it. */
function cpuTable(results: readonly SizeResult[]): string[] {
  const cpu = (m: { readonly cpuMs?: number } | undefined): string =>
    m?.cpuMs === undefined ? 'not measured' : ms(m.cpuMs);
  const ratio = (limit: { readonly cpuMs?: number }, engine: { readonly cpuMs?: number }): string =>
    limit.cpuMs === undefined || engine.cpuMs === undefined ? '' : (limit.cpuMs / engine.cpuMs).toFixed(2);
  if (results.every((r) => r.build.cpuMs === undefined)) return [];
  return [
    'CPU time of the same spans (user and system, every thread of the process: the build decodes on worker threads and LevelDB compacts on its own), which a machine shared with other work changes less than the time waited for a core:',
    '',
    '| Ledger | Bare loop | Cold build | Ratio | Warm open | Catch-up of 1,000 | Its bare loop | In-memory replay |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...results.map(
      (r) =>
        `| ${count(r.records)} records | ${cpu(r.bare)} | ${cpu(r.build)} | ${ratio(r.bare, r.build)} | ${cpu(r.warm)} | ${cpu(r.catchUp)} | ${cpu(r.catchUpBare)} | ${cpu(r.memory)} |`,
    ),
    '',
  ];
}

function targets(results: readonly SizeResult[]): string[] {
  const small = results.find((r) => r.records === 100_000);
  const large = results.find((r) => r.records === 10_000_000);
  const largest = results.reduce((a, b) => (b.records > a.records ? b : a));
  const build = `a cold build of ${count(largest.records)} at 0.33 of its bare loop or better: ${(largest.bare.ms / largest.build.ms).toFixed(2)}`;
  const catchUp = `a catch-up of 1,000 in 20 ms or less: ${results.map((r) => `${ms(r.catchUp.ms)} (${count(r.records)}; its bare loop ${r.catchUpBare === undefined ? 'not measured' : ms(r.catchUpBare.ms)})`).join(', ')}`;
  if (small === undefined || large === undefined) return [`Targets, measured: ${build}; ${catchUp}.`];
  return [
    `Targets, measured: a warm open of 10M within 2x that of 100k: ${(large.warm.ms / small.warm.ms).toFixed(2)}x; ` +
      `at least 100x faster than replaying 10M in memory: ${Math.round(large.memory.ms / large.warm.ms)}x; ` +
      `under 256 MB of RSS opening and querying 10M: ${large.warm.rssMiB} MiB (peak ${large.warm.peakMiB} MiB); ${build}; ${catchUp}.`,
  ];
}

/** What a run keeps in `bench/index-results.json`, and what the docs' sections are made from. */
interface Stored {
  readonly date: string;
  readonly machine: string;
  readonly results: readonly SizeResult[];
}

/** The table of every size, for docs/benchmarks.md. */
function tableSection({ date, machine, results }: Stored): string {
  return [
    `Measured ${date.slice(0, 10)} on ${machine}. Each figure in a fresh process; warm opens, catch-ups, replays and bare loops best of ${RUNS} (the 10M replay once, with a 16 GiB heap), builds once. ` +
      "Bare loop: the file read in 8 MiB chunks, split at newlines, `JSON.parse` of each line, no checks, no state; a ratio is the bare loop's time over the engine's (1.00: as fast as the limit).",
    '',
    ...table(results),
    '',
    ...cpuTable(results),
    ...targets(results),
  ].join('\n');
}

/** What the read model buys, in one sentence, for docs/read-model.md: the smallest and the largest ledger measured. */
function summarySection({ date, results }: Stored): string {
  const small = results.reduce((a, b) => (b.records < a.records ? b : a));
  const large = results.reduce((a, b) => (b.records > a.records ? b : a));
  const beside = small === large ? '' : `, where one of ${count(small.records)} takes ${ms(small.warm.ms)}`;
  return (
    `Measured by \`make bench\` on ${date.slice(0, 10)} ([benchmarks](benchmarks.md#the-read-model)): an open of an up-to-date read model ` +
    `of ${count(large.records)} records takes ${ms(large.warm.ms)}${beside}, against ${ms(large.memory.ms)} ` +
    `to replay the ${count(large.records)} in memory; opening and querying it holds ${large.warm.rssMiB} MiB of RSS, against ${large.memory.rssMiB} MiB for the replay.`
  );
}

function writeDocs(stored: Stored): void {
  writeGeneratedSection(path.join(ROOT, 'docs', 'benchmarks.md'), 'index', tableSection(stored), 'The read model');
  writeGeneratedSection(path.join(ROOT, 'docs', 'read-model.md'), 'figures', summarySection(stored));
}

async function main(): Promise<void> {
  const sizesArg = process.argv.indexOf('--sizes');
  const sizes =
    sizesArg === -1 ? [100_000, 1_000_000, 10_000_000] : (process.argv[sizesArg + 1] ?? '').split(',').map(Number);
  fs.mkdirSync(DATA, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(DATA, 'index-'));
  try {
    const results: SizeResult[] = [];
    for (const records of sizes) results.push(await measureSize(records, scratch));
    progressDone();
    const machine = `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), ${Math.round(os.totalmem() / (1 << 30))} GiB, Node.js ${process.version}`;
    const stored: Stored = { date: new Date().toISOString(), machine, results };
    console.log(tableSection(stored));
    fs.writeFileSync(path.join(ROOT, 'bench', 'index-results.json'), `${JSON.stringify(stored, null, 2)}\n`);
    writeDocs(stored);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--measure') {
  const [kind = '', file = '', index = '', offset = '0'] = process.argv.slice(3);
  process.stdout.write(JSON.stringify(await measure(kind, file, index, Number(offset))));
} else if (process.argv[2] === '--docs') {
  writeDocs(JSON.parse(fs.readFileSync(path.join(ROOT, 'bench', 'index-results.json'), 'utf8')) as Stored);
} else {
  await main();
}
