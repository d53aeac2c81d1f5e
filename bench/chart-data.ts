/**
 * What the benchmark's charts (`bench/charts.ts`) draw, taken from the results files: the
 * replay rates and peaks against the ledger's size, each figure that has a target as its ratio
 * to its bare loop, and append throughput against the number of appenders. `bench/results.json`
 * is read through its schema (`bench/results-schema.ts`); a series or figure the results do not
 * hold is left out rather than drawn as zero.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GroupCommit, ReplayResult, Results } from './results-schema.js';
import { TARGETS } from './targets.js';

// -- what the charts read of the results files -------------------------------------------------

/** What the charts read of `bench/results.json`: all of it, as `bench/run.ts` writes it. */
export type RunResults = Results;

/** A measured process of the read model's benchmark: its time and its peak RSS. */
interface Measured {
  readonly ms: number;
  readonly peakMiB: number;
}

/** What the charts read of `bench/index-results.json`. */
export interface IndexResults {
  readonly date: string;
  readonly results: readonly {
    readonly records: number;
    readonly build: { readonly recordsPerSecond: number; readonly ms: number };
    readonly warm: Measured;
    readonly memory: Measured;
    readonly bare: Measured;
  }[];
}

/** The results files a set of charts is drawn from; the read model's is optional. */
export interface ChartInputs {
  readonly run: RunResults;
  readonly index?: IndexResults;
}

/** The JSON of the results file `file`; an unreadable one is an error that names it and what writes it. */
function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: cannot read the results (${(e as Error).message}); \`make bench\` writes them`);
  }
}

/**
 * Reads `results.json` and, when there, `index-results.json` from `dir`. A missing, unreadable
 * or misshapen `results.json`, or a present but unreadable or misshapen `index-results.json`,
 * is an error that names the file and what writes it.
 */
export function readInputs(dir: string): ChartInputs {
  const runFile = path.join(dir, 'results.json');
  const indexFile = path.join(dir, 'index-results.json');
  const run = readJson(runFile) as RunResults;
  if (!Array.isArray(run.replay) || typeof run.append !== 'object' || run.append === null)
    throw new Error(`${runFile}: no "replay" list or "append" object; \`make bench\` writes them`);
  if (!fs.existsSync(indexFile)) return { run };
  const index = readJson(indexFile) as IndexResults;
  if (!Array.isArray(index.results) || index.results.length === 0)
    throw new Error(`${indexFile}: no "results" list; \`node dist/bench/read-model.js\` writes it`);
  return { run, index };
}

// -- the data each chart draws ----------------------------------------------------------------

/** One point of a curve against the ledger's size. */
export interface SizePoint {
  readonly series: string;
  readonly records: number;
  readonly value: number;
}

/** One figure that has a target, as a ratio to its bare loop. */
export interface RatioFigure {
  readonly figure: string;
  readonly ratio: number;
  readonly target: number;
}

/** One point of the append curve. */
export interface AppendPoint {
  readonly series: string;
  readonly appenders: number;
  readonly perSecond: number;
  /** A target's text: the ratio to the bare loop it asks for. */
  readonly label?: string;
}

export const JSONL = 'JSONL';
export const LEVEL = 'LevelDB';
export const MEMORY = 'in memory (memory:)';
export const USER = 'by hand: readline + JSON.parse + Map';
export const BARE = 'bare loop: JSON.parse of each line';
export const READ_MODEL_BUILD = 'read model cold build (LevelDB)';
export const READ_MODEL_WARM = 'read model: warm open + queries';
export const JSONL_INDEX_BENCH = 'JSONL replay + queries (read-model benchmark)';
export const SYNC_LOOP = 'bare loop: a write + fdatasync per record';
export const TARGET = 'target (a ratio to the bare loop)';

/** A count of records as the axes show it: 100k, 1M. */
export function count(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** The replay rates of every backend at every size `bench/results.json` holds, and the read model's builds. */
export function replayRates({ run, index }: ChartInputs): SizePoint[] {
  const points: SizePoint[] = [];
  for (const r of run.replay) {
    points.push({ series: JSONL, records: r.records, value: r.engine.perSecond });
    if (r.level !== undefined) points.push({ series: LEVEL, records: r.records, value: r.level.engine.perSecond });
    if (r.memory !== undefined) points.push({ series: MEMORY, records: r.records, value: r.memory.engine.perSecond });
    if (r.user !== undefined) points.push({ series: USER, records: r.records, value: r.user.engine.perSecond });
    points.push({ series: BARE, records: r.records, value: r.bare.perSecond });
  }
  for (const r of index?.results ?? [])
    points.push({ series: READ_MODEL_BUILD, records: r.records, value: r.build.recordsPerSecond });
  return points;
}

/**
 * The peak RSS of a replaying process at each size: from `bench/results.json` where it holds
 * them, and the read model's warm open from `bench/index-results.json`. The read-model
 * benchmark's in-memory replay (a JSONL replay, with the queries) stands in for the JSONL series
 * only when `bench/results.json` has no peaks, so that one series is never drawn twice.
 */
export function replayPeaks({ run, index }: ChartInputs): SizePoint[] {
  const points: SizePoint[] = [];
  for (const r of run.replay) {
    if (r.engine.peakMiB !== undefined) points.push({ series: JSONL, records: r.records, value: r.engine.peakMiB });
    if (r.level?.engine.peakMiB !== undefined)
      points.push({ series: LEVEL, records: r.records, value: r.level.engine.peakMiB });
  }
  const jsonlMeasured = points.some((p) => p.series === JSONL);
  for (const r of index?.results ?? []) {
    if (!jsonlMeasured) points.push({ series: JSONL_INDEX_BENCH, records: r.records, value: r.memory.peakMiB });
    points.push({ series: READ_MODEL_WARM, records: r.records, value: r.warm.peakMiB });
  }
  return points;
}

/** Every appends-at-once entry of `append`: `concurrent`, and any other (or list of them) of its shape. */
function concurrentEntries(append: RunResults['append']): GroupCommit[] {
  const isEntry = (v: unknown): v is GroupCommit =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as GroupCommit).appenders === 'number' &&
    typeof (v as GroupCommit).engine?.perSecond === 'number' &&
    typeof (v as GroupCommit).ratio === 'number';
  return Object.values(append)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter(isEntry)
    .sort((a, b) => a.appenders - b.appenders);
}

/** The targets of appends by `appenders` callers, JSONL and LevelDB, where the issue sets one. */
function appendTarget(appenders: number, backend: 'jsonl' | 'level'): number | undefined {
  return TARGETS.append[backend].find((t) => t.appenders === appenders)?.ratio;
}

/** Each figure that has a target, in the order the results table lists them. */
export function ratioFigures({ run, index }: ChartInputs): RatioFigure[] {
  const figures: RatioFigure[] = [];
  for (const r of run.replay)
    figures.push({ figure: `Replay ${count(r.records)}, JSONL`, ratio: r.ratio, target: TARGETS.replay.jsonl });
  for (const r of run.replay) {
    if (r.level !== undefined)
      figures.push({
        figure: `Replay ${count(r.records)}, LevelDB`,
        ratio: r.level.ratio,
        target: TARGETS.replay.level,
      });
  }
  for (const r of run.replay) {
    if (r.level?.limit !== undefined)
      figures.push({
        figure: `Replay ${count(r.records)}, LevelDB, of classic-level's iterator`,
        ratio: r.level.limit.share,
        target: TARGETS.replay.levelOfIterator,
      });
  }
  const largest = run.replay.reduce<ReplayResult | undefined>(
    (a, b) => (a === undefined || b.records > a.records ? b : a),
    undefined,
  );
  const million = run.replay.find((r) => r.records === TARGETS.replay.rateHeldFrom);
  if (largest !== undefined && million !== undefined && largest.records > million.records) {
    figures.push({
      figure: `Replay rate, ${count(largest.records)} against ${count(million.records)}`,
      ratio: Math.round((1000 * largest.engine.perSecond) / million.engine.perSecond) / 1000,
      target: TARGETS.replay.rateHeld,
    });
  }
  const largestIndex = index?.results.reduce((a, b) => (b.records > a.records ? b : a));
  if (largestIndex !== undefined) {
    figures.push({
      figure: `Read model cold build, ${count(largestIndex.records)}`,
      ratio: Math.round((100 * largestIndex.bare.ms) / largestIndex.build.ms) / 100,
      target: TARGETS.readModelBuild,
    });
  }
  const a = run.append;
  const one = appendTarget(1, 'jsonl');
  if (one !== undefined) {
    figures.push({ figure: 'Append, 1 appender', ratio: a.ratio, target: one });
    if (a.paired !== undefined)
      figures.push({ figure: 'Append, 1 appender, paired', ratio: a.paired.ratio, target: one });
  }
  const concurrent = concurrentEntries(a);
  for (const c of concurrent) {
    const target = appendTarget(c.appenders, 'jsonl');
    if (target !== undefined) figures.push({ figure: `Append, ${c.appenders} appenders`, ratio: c.ratio, target });
  }
  const levelOne = appendTarget(1, 'level');
  if (a.level !== undefined && levelOne !== undefined)
    figures.push({ figure: 'Append, LevelDB, 1 appender', ratio: a.level.ratio, target: levelOne });
  for (const c of concurrent) {
    const target = appendTarget(c.appenders, 'level');
    if (c.level !== undefined && target !== undefined)
      figures.push({ figure: `Append, LevelDB, ${c.appenders} appenders`, ratio: c.level.ratio, target });
  }
  return figures;
}

/**
 * Append throughput by the number of appenders, JSONL and LevelDB; the one-sync-per-record loop
 * (flat: it has one caller); and, where a target is set, the throughput the target asks for.
 */
export function appendPoints({ run }: ChartInputs): AppendPoint[] {
  const a = run.append;
  const concurrent = concurrentEntries(a);
  const points: AppendPoint[] = [{ series: JSONL, appenders: 1, perSecond: a.engine.perSecond }];
  for (const c of concurrent) points.push({ series: JSONL, appenders: c.appenders, perSecond: c.engine.perSecond });
  if (a.level !== undefined) points.push({ series: LEVEL, appenders: 1, perSecond: a.level.engine.perSecond });
  for (const c of concurrent) {
    if (c.level !== undefined)
      points.push({ series: LEVEL, appenders: c.appenders, perSecond: c.level.engine.perSecond });
  }
  const counts = [1, ...concurrent.map((c) => c.appenders)];
  for (const appenders of counts) points.push({ series: SYNC_LOOP, appenders, perSecond: a.bare.perSecond });
  for (const appenders of counts) {
    const target = appendTarget(appenders, 'jsonl');
    if (target !== undefined)
      points.push({
        series: TARGET,
        appenders,
        perSecond: Math.round(target * a.bare.perSecond),
        label: `≥ ${target}×`,
      });
  }
  return points;
}
