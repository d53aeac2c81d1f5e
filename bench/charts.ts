/**
 * The benchmark's pictures: SVG charts drawn from the results files the benchmarks write
 * (`bench/results.json` from `bench/run.ts`, `bench/index-results.json` from
 * `bench/read-model.ts`), for `docs/benchmarks.md`.
 *
 * - `replay-rate.svg`: the replay rate against the ledger's size, for each backend, beside the
 *   bare loop and the loop a user would write by hand;
 * - `replay-rss.svg`: the peak RSS of the process that replays, against the ledger's size, with
 *   the 1 GiB target marked;
 * - `ratios.svg`: each figure that has a target, as its ratio to the bare loop of its run, a bar
 *   per figure with the target marked on it;
 * - `append.svg`: append throughput against the number of appenders, for each backend, beside
 *   the one-sync-per-record loop and the targets.
 *
 * The charts are Vega-Lite specifications rendered to SVG by Vega in this process: no browser,
 * no canvas, no network (the data is inline). A series or a figure the results do not hold is
 * left out of its chart rather than drawn as zero, so that a results file written before a
 * figure was measured still draws.
 *
 * `node dist/bench/charts.js` draws them from the results in the repository into `docs/charts/`
 * (`make charts`; `make bench` runs it last); `--results <dir>` reads the results files from
 * another folder, `--out <dir>` writes the charts to another.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { TARGETS } from './targets.js';
import { measureTextAsHelvetica } from './text-width.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');

// -- what the charts read of the results files -------------------------------------------------

/** A rate measured a few times: the best, per second, and (when measured) the peak RSS of its process. */
interface Rate {
  readonly perSecond: number;
  readonly peakMiB?: number;
}

/** What the charts read of one ledger size in `bench/results.json`'s `replay`. */
interface ReplayEntry {
  readonly records: number;
  readonly bare: Rate;
  readonly engine: Rate;
  readonly ratio: number;
  readonly level?: { readonly engine: Rate; readonly ratio: number };
  readonly memory?: { readonly engine: Rate; readonly ratio: number };
  readonly user?: { readonly engine: Rate; readonly ratio: number };
}

/** Appends by several callers at once: `bench/results.json`'s `append.concurrent` and any like it. */
interface ConcurrentEntry {
  readonly appenders: number;
  readonly engine: Rate;
  readonly ratio: number;
  readonly level?: { readonly engine: Rate; readonly ratio: number };
}

/** What the charts read of `bench/results.json`. */
export interface RunResults {
  readonly date: string;
  readonly machine: { readonly cpus: number; readonly cpuModel: string; readonly node: string };
  readonly replay: readonly ReplayEntry[];
  readonly append: {
    readonly bare: Rate;
    readonly engine: Rate;
    readonly ratio: number;
    readonly paired?: { readonly ratio: number };
    readonly level?: { readonly engine: Rate; readonly ratio: number };
    readonly [more: string]: unknown;
  };
}

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
interface SizePoint {
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
interface AppendPoint {
  readonly series: string;
  readonly appenders: number;
  readonly perSecond: number;
  /** A target's text: the ratio to the bare loop it asks for. */
  readonly label?: string;
}

const JSONL = 'JSONL';
const LEVEL = 'LevelDB';
const MEMORY = 'in memory (memory:)';
const USER = 'by hand: readline + JSON.parse + Map';
const BARE = 'bare loop: JSON.parse of each line';
const READ_MODEL_BUILD = 'read model cold build (LevelDB)';
const READ_MODEL_WARM = 'read model: warm open + queries';
const JSONL_INDEX_BENCH = 'JSONL replay + queries (read-model benchmark)';
const SYNC_LOOP = 'bare loop: a write + fdatasync per record';
const TARGET = 'target (a ratio to the bare loop)';

/** A count of records as the axes show it: 100k, 1M. */
function count(n: number): string {
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
function concurrentEntries(append: RunResults['append']): ConcurrentEntry[] {
  const isEntry = (v: unknown): v is ConcurrentEntry =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ConcurrentEntry).appenders === 'number' &&
    typeof (v as ConcurrentEntry).engine?.perSecond === 'number' &&
    typeof (v as ConcurrentEntry).ratio === 'number';
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
  const largest = run.replay.reduce<ReplayEntry | undefined>(
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

// -- the charts --------------------------------------------------------------------------------

/** The series' colors, fixed so that a backend has the same color in every chart. */
const SERIES = [
  [JSONL, '#1f77b4'],
  [LEVEL, '#2ca02c'],
  [MEMORY, '#9467bd'],
  [USER, '#8c564b'],
  [BARE, '#7f7f7f'],
  [READ_MODEL_BUILD, '#ff7f0e'],
  [READ_MODEL_WARM, '#ff7f0e'],
  [JSONL_INDEX_BENCH, '#1f77b4'],
  [SYNC_LOOP, '#7f7f7f'],
  [TARGET, '#d62728'],
] as const;

const WIDTH = 560;
const HEIGHT = 320;
/** A white background and dark ink: the SVGs are read on GitHub's light and dark themes alike. */
const CONFIG = {
  background: 'white',
  config: {
    font: 'Helvetica, Arial, sans-serif',
    title: { fontSize: 15, subtitleFontSize: 11, subtitleColor: '#555', anchor: 'start' as const, offset: 12 },
    axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#e6e6e6' },
    legend: { labelFontSize: 11, titleFontSize: 11, labelLimit: 320 },
  },
};

/** Where the figures come from, on two lines: each narrower than the chart, so the chart sets the SVG's width. */
function subtitle(inputs: ChartInputs, from: 'run' | 'index' | 'both'): string[] {
  const m = inputs.run.machine;
  const run = `bench/run.ts ${inputs.run.date.slice(0, 10)}`;
  const index = inputs.index === undefined ? '' : `bench/read-model.ts ${inputs.index.date.slice(0, 10)}`;
  const which = from === 'run' || index === '' ? run : from === 'index' ? index : `${run}, ${index}`;
  return [`Measured by ${which},`, `on ${m.cpus} CPUs (${m.cpuModel}), Node.js ${m.node}`];
}

/** The colors of the series a chart draws, in {@link SERIES} order. */
function colors(present: readonly string[]): { domain: string[]; range: string[] } {
  const drawn = SERIES.filter(([name]) => present.includes(name));
  return { domain: drawn.map(([name]) => name), range: drawn.map(([, color]) => color) };
}

/** A log scale's domain around `values`, a margin of `pad` times on each side, so no point sits on an edge. */
function logDomain(values: readonly number[], pad: number): [number, number] {
  return [Math.min(...values) / pad, Math.max(...values) * pad];
}

/** The color encoding of the series of `points`, each in its fixed color, the legend under the chart. */
function seriesColor(points: readonly { readonly series: string }[]) {
  return {
    field: 'series',
    type: 'nominal' as const,
    title: null,
    scale: colors([...new Set(points.map((p) => p.series))]),
    legend: { orient: 'bottom' as const, columns: 2, labelLimit: 520, columnPadding: 24 },
  };
}

/** Lines with points against the ledger's size, on log scales where the values span decades. */
function sizeChart(
  title: string,
  sub: readonly string[],
  yTitle: string,
  points: readonly SizePoint[],
  rule?: { readonly value: number; readonly label: string },
): TopLevelSpec {
  const ys = points.map((p) => p.value);
  const yLog = ys.length > 0 && Math.max(...ys, rule?.value ?? 0) / Math.min(...ys) >= 10;
  const sizes = [...new Set(points.map((p) => p.records))].sort((a, b) => a - b);
  const x = {
    field: 'records',
    type: 'quantitative' as const,
    title: 'Ledger size (records, log scale)',
    scale: { type: 'log' as const, domain: logDomain(sizes, 1.4), nice: false },
    axis: { format: '~s', values: sizes },
  };
  const y = {
    field: 'value',
    type: 'quantitative' as const,
    title: yLog ? `${yTitle}, log scale` : yTitle,
    scale: yLog
      ? {
          type: 'log' as const,
          domain: logDomain([...ys, ...(rule === undefined ? [] : [rule.value])], 1.5),
          nice: false,
        }
      : { zero: true },
    axis: { format: '~s' },
  };
  const color = seriesColor(points);
  return {
    ...CONFIG,
    title: { text: title, subtitle: sub },
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values: points.map((p) => ({ ...p })) },
        mark: { type: 'line', point: { size: 60, filled: true } },
        encoding: { x, y, color, detail: { field: 'series' } },
      },
      ...(rule === undefined
        ? []
        : [
            {
              data: { values: [{ value: rule.value, label: rule.label }] },
              layer: [
                {
                  mark: { type: 'rule' as const, color: '#d62728', strokeDash: [6, 4], strokeWidth: 1.5 },
                  encoding: { y: { field: 'value', type: 'quantitative' as const } },
                },
                {
                  mark: {
                    type: 'text' as const,
                    color: '#d62728',
                    align: 'left' as const,
                    dx: 4,
                    dy: -7,
                    x: 0,
                    fontSize: 11,
                  },
                  encoding: {
                    y: { field: 'value', type: 'quantitative' as const },
                    text: { field: 'label' },
                  },
                },
              ],
            },
          ]),
    ],
  } as TopLevelSpec;
}

/** A bar per figure (its ratio to its bare loop), the target a tick across it, on a log scale. */
function ratioChart(inputs: ChartInputs, figures: readonly RatioFigure[]): TopLevelSpec {
  const values = figures.map((f) => ({
    ...f,
    met: f.ratio >= f.target ? 'met' : 'not met',
    label: `${f.ratio.toFixed(2)} (target ≥ ${f.target.toFixed(2)})`,
  }));
  const all = figures.flatMap((f) => [f.ratio, f.target]);
  const low = Math.min(0.1, ...all.map((v) => v / 1.5));
  const high = Math.max(10, ...all.map((v) => v * 4));
  const x = {
    field: 'ratio',
    type: 'quantitative' as const,
    title: 'Ratio to the bare loop of the same run (1 = as fast as the limit; log scale)',
    scale: { type: 'log' as const, domain: [low, high] },
  };
  const y = {
    field: 'figure',
    type: 'nominal' as const,
    title: null,
    sort: figures.map((f) => f.figure),
    axis: { labelLimit: 260 },
  };
  return {
    ...CONFIG,
    title: {
      text: 'Each figure against its target',
      subtitle: [
        ...subtitle(inputs, 'both'),
        'A bar per figure: its ratio to the bare loop; the black tick: its target',
      ],
    },
    width: WIDTH - 120,
    height: { step: 24 },
    data: { values },
    layer: [
      {
        mark: { type: 'bar', height: 14 },
        encoding: {
          y,
          x,
          x2: { datum: low },
          color: {
            field: 'met',
            type: 'nominal',
            title: null,
            scale: { domain: ['met', 'not met'], range: ['#2e7d32', '#ef6c00'] },
            legend: { orient: 'bottom' },
          },
        },
      },
      {
        mark: { type: 'tick', color: '#111', opacity: 1, thickness: 3, size: 22 },
        encoding: { y, x: { ...x, field: 'target' } },
      },
      {
        mark: { type: 'text', align: 'left', dx: 6, fontSize: 11, color: '#222' },
        encoding: {
          y,
          x: { ...x, field: 'labelAt' },
          text: { field: 'label' },
        },
        transform: [{ calculate: 'max(datum.ratio, datum.target)', as: 'labelAt' }],
      },
    ],
  } as TopLevelSpec;
}

/** Append throughput against the number of appenders, the targets as open marks. */
function appendChart(inputs: ChartInputs, points: readonly AppendPoint[]): TopLevelSpec {
  const counts = [...new Set(points.map((p) => p.appenders))].sort((a, b) => a - b);
  const x = {
    field: 'appenders',
    type: 'quantitative' as const,
    title: 'Appenders at once (log scale)',
    scale: { type: 'log' as const, base: 2, domain: logDomain(counts, 1.4), nice: false },
    axis: { values: counts, format: 'd' },
  };
  const y = {
    field: 'perSecond',
    type: 'quantitative' as const,
    title: 'Durable appends (records/s)',
    axis: { format: '~s' },
  };
  const color = seriesColor(points);
  return {
    ...CONFIG,
    title: {
      text: 'Append throughput against appenders, group commit',
      subtitle: subtitle(inputs, 'run'),
    },
    width: WIDTH,
    height: HEIGHT,
    data: { values: points.map((p) => ({ ...p })) },
    layer: [
      {
        transform: [{ filter: `datum.series !== '${TARGET}'` }],
        mark: { type: 'line', point: { size: 60, filled: true } },
        encoding: { x, y, color },
      },
      {
        transform: [{ filter: `datum.series === '${TARGET}'` }],
        mark: { type: 'point', shape: 'diamond', size: 120, filled: false, strokeWidth: 2 },
        encoding: { x, y, color },
      },
      {
        transform: [{ filter: `datum.series === '${TARGET}'` }],
        mark: { type: 'text', align: 'right', dx: -10, fontSize: 11, color: '#d62728' },
        encoding: { x, y, text: { field: 'label' } },
      },
    ],
  } as TopLevelSpec;
}

/** Each chart's file name and its Vega-Lite specification, for `inputs`. */
export function chartSpecs(inputs: ChartInputs): { readonly file: string; readonly spec: TopLevelSpec }[] {
  return [
    {
      file: 'replay-rate.svg',
      spec: sizeChart(
        'Replay rate against ledger size',
        subtitle(inputs, 'both'),
        'Replay rate (records/s)',
        replayRates(inputs),
      ),
    },
    {
      file: 'replay-rss.svg',
      spec: sizeChart(
        'Peak RSS of a replaying process against ledger size',
        subtitle(inputs, 'both'),
        'Peak RSS (MiB)',
        replayPeaks(inputs),
        {
          value: TARGETS.replay.peakMiB,
          label: `target: ≤ ${TARGETS.replay.peakMiB / 1024} GiB at ${count(TARGETS.replay.peakAt)}`,
        },
      ),
    },
    { file: 'ratios.svg', spec: ratioChart(inputs, ratioFigures(inputs)) },
    { file: 'append.svg', spec: appendChart(inputs, appendPoints(inputs)) },
  ];
}

/** Renders one Vega-Lite specification to SVG text, in this process. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  // without it, Vega sizes the SVG to its guesses of the text's widths: a blank band on the right
  measureTextAsHelvetica();
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}

/** Draws every chart of `inputs` into `outDir` (made if need be); gives the files written. */
export async function writeCharts(inputs: ChartInputs, outDir: string): Promise<string[]> {
  fs.mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const { file, spec } of chartSpecs(inputs)) {
    const target = path.join(outDir, file);
    fs.writeFileSync(target, await renderSvg(spec));
    written.push(target);
  }
  return written;
}

/**
 * `make charts`: draws the charts from the results files into `docs/charts/` (or `--results
 * <dir>`, `--out <dir>`). Gives the exit status: 0 when drawn, 1 when the results could not be
 * read, 2 for a usage error.
 */
export async function main(args: readonly string[]): Promise<number> {
  let resultsDir = path.join(ROOT, 'bench');
  let outDir = path.join(ROOT, 'docs', 'charts');
  for (let i = 0; i < args.length; i += 2) {
    const value = args[i + 1];
    if (value === undefined || (args[i] !== '--results' && args[i] !== '--out')) {
      console.error('usage: node dist/bench/charts.js [--results <dir>] [--out <dir>]');
      return 2;
    }
    if (args[i] === '--results') resultsDir = path.resolve(value);
    else outDir = path.resolve(value);
  }
  let inputs: ChartInputs;
  try {
    inputs = readInputs(resultsDir);
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  const written = await writeCharts(inputs, outDir);
  console.log(`wrote ${written.map((file) => path.relative(process.cwd(), file)).join(', ')}`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = await main(process.argv.slice(2));
