/**
 * The results table of `bench/run.ts`, from `bench/results.json`: on the console, and in the
 * generated section of `docs/benchmarks.md` (between its `<!-- results:start -->` and
 * `<!-- results:end -->` markers). Each row says what was measured, the engine's figure, the
 * bare loop's beside it, their ratio, the row's goal where it has one, and whether it is met.
 *
 * @module
 */
import * as path from 'node:path';
import { writeGeneratedSection } from './common.js';
import { LEVEL_BARE_BATCH } from './measure-replay.js';
import {
  type AppendResults,
  type GroupCommit,
  type Limit,
  type PointBackend,
  type Rate,
  type Results,
  ratioOf,
} from './results-schema.js';
import { TARGETS } from './targets.js';

export const mib = (bytes: number): string => `${(bytes / (1 << 20)).toFixed(1)} MiB`;

export function formatRate(perSecond: number): string {
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
export function formatCount(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** A row's goal and whether the figure meets it: at least `target`. */
const atLeast = (value: number, target: number): [string, string] => [
  `≥ ${target.toFixed(2)}`,
  value >= target ? 'yes' : 'no',
];

/** A row without a goal (a limit, a loop for reference). */
const NO_GOAL: [string, string] = ['—', '—'];

/** The JSONL appends' goal with `appenders` callers at once, LevelDB's with `backend: 'level'`. */
function appendGoal(ratio: number, appenders: number, backend: 'jsonl' | 'level' = 'jsonl'): [string, string] {
  const target = TARGETS.append[backend].find((t) => t.appenders === appenders)?.ratio;
  return target === undefined ? NO_GOAL : atLeast(ratio, target);
}

/** The rows of the results table: what, the engine's figure, its limit, the ratio, the target. */
function rows(results: Results): string[][] {
  const out: string[][] = [];
  for (const r of results.replay) {
    const peakGoal = r.records === TARGETS.replay.peakAt;
    const [text, met] = atLeast(r.ratio, TARGETS.replay.jsonl);
    const peakMet = !peakGoal || (r.engine.peakMiB !== undefined && r.engine.peakMiB <= TARGETS.replay.peakMiB);
    out.push([
      `Replay ${formatCount(r.records)} records (${mib(r.bytes)}): \`Ledger.open\`, read-only`,
      `${formatRate(r.engine.perSecond)} records/s${peakText(r.engine)}`,
      `${formatRate(r.bare.perSecond)} records/s${r.bareChunked === true ? ' (in 8 MiB chunks)' : ''}`,
      ratioText(r.ratio),
      peakGoal ? `${text}; ≤ ${TARGETS.replay.peakMiB / 1024} GiB RSS` : text,
      met === 'yes' && peakMet ? 'yes' : 'no',
    ]);
    if (r.user !== undefined) {
      out.push([
        `Replay ${formatCount(r.records)} records by hand: \`readline\` + \`JSON.parse\` + a \`Map\` of item states (no checks)`,
        `${formatRate(r.user.engine.perSecond)} records/s`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(r.user.ratio),
        ...NO_GOAL,
      ]);
    }
    for (const t of r.threads ?? []) {
      out.push([
        `Replay ${formatCount(r.records)} records on ${t.threads} thread${t.threads === 1 ? '' : 's'} in all (\`scan: { threads: ${t.threads} }\`)`,
        `${formatRate(t.engine.perSecond)} records/s`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(t.ratio),
        ...NO_GOAL,
      ]);
    }
    if (r.level !== undefined) {
      out.push([
        `Replay ${formatCount(r.records)} records, LevelDB (${mib(r.level.bytes)} folder): \`Ledger.open\`, read-only`,
        `${formatRate(r.level.engine.perSecond)} records/s${peakText(r.level.engine)}`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(r.level.ratio),
        ...atLeast(r.level.ratio, TARGETS.replay.level),
      ]);
      const own = r.level.limit;
      if (own !== undefined) {
        out.push([
          `Replay ${formatCount(r.records)} records, LevelDB, against LevelDB’s own limit: classic-level’s bare iterator loop over every value of the same folder (\`nextv\` of ${LEVEL_BARE_BATCH} as views, no keys; nothing decoded)`,
          `${formatRate(r.level.engine.perSecond)} records/s`,
          `${formatRate(own.engine.perSecond)} records/s`,
          ratioText(own.share),
          ...atLeast(own.share, TARGETS.replay.levelOfIterator),
        ]);
      }
    }
    if (r.memory !== undefined) {
      out.push([
        `Replay ${formatCount(r.records)} records, in memory (\`memory:\`): \`Ledger.open\`, read-only`,
        `${formatRate(r.memory.engine.perSecond)} records/s`,
        `${formatRate(r.bare.perSecond)} records/s`,
        ratioText(r.memory.ratio),
        ...NO_GOAL,
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
      ...atLeast(ratioOf(largest.engine, from.engine), TARGETS.replay.rateHeld),
    ]);
  }
  const a = results.append;
  out.push([
    `Append, 1 appender awaiting each (${a.records} records)`,
    `${formatRate(a.engine.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.ratio),
    ...appendGoal(a.ratio, 1),
  ]);
  out.push([
    `Append, 1 appender, paired with the bare loop in one process (median of ${a.paired.pairs.length} pairs of ${a.records} records)`,
    `${formatRate(a.paired.engine)} appends/s`,
    `${formatRate(a.paired.bare)} appends/s`,
    ratioText(a.paired.ratio),
    ...appendGoal(a.paired.ratio, 1),
  ]);
  groupRows(out, a, a.concurrent);
  if (a.many !== undefined) groupRows(out, a, a.many);
  out.push([
    `Append, LevelDB, 1 appender awaiting each (${a.records} records)`,
    `${formatRate(a.level.engine.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.level.ratio),
    ...appendGoal(a.level.ratio, 1, 'level'),
  ]);
  limitRow(out, a, a.level.limit, 'classic-level alone, a synced batch write per record', 'LevelDB’s own limit');
  const level = a.concurrent.level;
  if (level !== undefined) {
    out.push([
      `Append, LevelDB, ${a.concurrent.appenders} appenders at once, group commit (${a.concurrent.records} records)`,
      `${formatRate(level.engine.perSecond)} records/s`,
      `${formatRate(a.bare.perSecond)} appends/s`,
      ratioText(level.ratio),
      ...appendGoal(level.ratio, a.concurrent.appenders, 'level'),
    ]);
    limitRow(
      out,
      a,
      level.limit,
      `classic-level alone, ${a.concurrent.appenders} writers at once, each a synced batch write per record`,
      'LevelDB’s own limit',
    );
  }
  out.push([
    `Append, in memory (\`memory:\`, no I/O), 1 appender awaiting each (${a.records} records)`,
    `${formatRate(a.memory.engine.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(a.memory.ratio),
    ...NO_GOAL,
  ]);
  if (a.user !== undefined) {
    out.push([
      'Append by hand: `appendFile` + `datasync` on a file handle, 1 appender',
      `${formatRate(a.user.perSecond)} appends/s`,
      `${formatRate(a.bare.perSecond)} appends/s`,
      ratioText(ratioOf(a.user, a.bare)),
      ...NO_GOAL,
    ]);
  }
  out.push([
    'For reference: the bare loop through the thread pool (`fs.promises`)',
    `${formatRate(a.bareAsync.perSecond)} appends/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(ratioOf(a.bareAsync, a.bare)),
    ...NO_GOAL,
  ]);
  out.push(...pointTableRows(results));
  return out;
}

/** The point-query rows of the results table, when the results hold them. */
function pointTableRows(results: Results): string[][] {
  const out: string[][] = [];
  for (const b of results.points?.backends ?? []) pointRows(out, results.points?.records ?? 0, b);
  return out;
}

const BACKEND_NAMES: { readonly [B in PointBackend['backend']]: string } = {
  jsonl: 'JSONL',
  level: 'LevelDB',
  postgres: 'PostgreSQL',
};

const BARE_POINT_READS: { readonly [B in PointBackend['backend']]: string } = {
  jsonl: '`pread` of one line at its known offset',
  level: 'classic-level’s `get` of one key',
  postgres: 'a primary-key `SELECT`',
};

/** A time per query, from a rate of queries per second: 12.3 µs. */
const microsText = (rate: Rate): string => `${(1e6 / rate.perSecond).toFixed(1)} µs`;

/**
 * A backend's point-query rows: each query's time against the bare point read's, the ratio the
 * times' (lower is better), the goal both of {@link TARGETS}'s `points`.
 */
function pointRows(out: string[][], records: number, b: PointBackend): void {
  const { timesBare, micros } = TARGETS.points;
  for (const q of b.queries) {
    out.push([
      `Point query \`${q.query}()\`, ${BACKEND_NAMES[b.backend]}, ${formatCount(records)} records (bare: ${BARE_POINT_READS[b.backend]})`,
      microsText(q.engine),
      microsText(b.bare),
      `${ratioText(q.timesBare)}×`,
      `≤ ${timesBare}× the bare read; ≤ ${micros} µs`,
      q.timesBare <= timesBare && q.micros <= micros ? 'yes' : 'no',
    ]);
  }
}

/** A group commit's rows: its best of three, its limit's, and its rounds in one process, when they were measured. */
function groupRows(out: string[][], a: AppendResults, group: GroupCommit): void {
  out.push([
    `Append, ${group.appenders} appenders at once, group commit (${group.records} records)`,
    `${formatRate(group.engine.perSecond)} records/s`,
    `${formatRate(a.bare.perSecond)} appends/s`,
    ratioText(group.ratio),
    ...appendGoal(group.ratio, group.appenders),
  ]);
  limitRow(out, a, group.limit, `${group.appenders} lines per write + \`fdatasync\``);
  const p = group.paired;
  if (p === undefined) return;
  out.push([
    `Append, ${group.appenders} appenders, taking turns with the bare loop and the limit in one process (median of ${p.rounds.length} rounds; ${ratioText(p.share)} of the limit)`,
    `${formatRate(p.engine)} records/s`,
    `${formatRate(p.bare)} appends/s`,
    ratioText(p.ratio),
    ...appendGoal(p.ratio, group.appenders),
  ]);
}

/** The row of `limit`, measured beside the row before it (`what` it is), when it was. */
function limitRow(
  out: string[][],
  a: AppendResults,
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
    ...NO_GOAL,
  ]);
}

const HEADER = ['Measurement', 'Engine', 'Bare loop (limit)', 'Ratio', 'Goal', 'Met'];

/** The table for the console; with `pointsOnly`, the point-query rows alone. */
export function consoleTable(results: Results, options: { readonly pointsOnly?: boolean } = {}): string {
  const body = (options.pointsOnly === true ? pointTableRows(results) : rows(results)).map((row) =>
    row.map((cell) => cell.replaceAll('`', '')),
  );
  const widths = HEADER.map((h, c) => Math.max(h.length, ...body.map((row) => (row[c] as string).length)));
  const line = (row: readonly string[]): string =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number))).join('  ');
  return [line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function machineLine(results: Results): string {
  const m = results.machine;
  return `${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node.js ${m.node}, ${m.platform}, appends on ${m.filesystem}`;
}

export function markdown(results: Results): string {
  const table = [HEADER, ['---', '---:', '---:', '---:', '---:', '---:'], ...rows(results)].map(
    (row) => `| ${row.join(' | ')} |`,
  );
  return [
    `Measured ${results.date.slice(0, 10)} on ${machineLine(results)}. ${results.method}.`,
    '',
    ...table,
    '',
    `LevelDB rows: the same ledgers imported once into a classic-level folder, and appends to a fresh one, against the same bare loops. Bare loops: replay is \`readFileSync\` + \`split('\\n')\` + \`JSON.parse\` of each line; append is \`writeSync\` + \`fdatasyncSync\` of each line (the same ${results.append.meanLineBytes}-byte lines on average that the engine writes). Point queries: µs per query, each awaited, against the backend's bare point read of one record in the same run; their ratio is the query's time over the read's. Every run's figures are in \`bench/results.json\`.`,
  ].join('\n');
}

/** Writes the figures of `results` into the generated section of docs/benchmarks.md. */
export function writeDocs(root: string, results: Results): void {
  writeGeneratedSection(path.join(root, 'docs', 'benchmarks.md'), 'results', markdown(results), 'Results');
}
