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
 * figure was measured still draws. What each chart draws is taken from the results files by
 * `bench/chart-data.ts`.
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
import {
  type AppendPoint,
  appendPoints,
  BARE,
  type ChartInputs,
  count,
  JSONL,
  JSONL_INDEX_BENCH,
  LEVEL,
  MEMORY,
  type RatioFigure,
  READ_MODEL_BUILD,
  READ_MODEL_WARM,
  ratioFigures,
  readInputs,
  replayPeaks,
  replayRates,
  type SizePoint,
  SYNC_LOOP,
  TARGET,
  USER,
} from './chart-data.js';
import { TARGETS } from './targets.js';
import { measureTextAsHelvetica } from './text-width.js';

const SCRIPT = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SCRIPT), '..', '..');

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
