/**
 * How `bench/run.ts` repeats a measurement: each run in a fresh Node.js process
 * (`bench/measure.ts`), {@link RUNS} runs of every figure taking turns with those of its limit,
 * the best run kept.
 *
 * @module
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childSays, progress, type Timing } from './common.js';
import type { Kind } from './measure.js';
import type { Pair, Rate } from './results-schema.js';

/** How many times each measurement runs; the best run is kept. */
export const RUNS = 3;

/** The script of one measurement, beside this one. */
const MEASURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'measure.js');

/** One measurement to repeat: what it is, how it runs, and how many records it must report. */
export interface Spec {
  readonly label: string;
  readonly kind: Kind;
  readonly file: () => string;
  readonly n: number;
  /** The records (queries) it must report; any number when absent (a run with a time budget). */
  readonly expected?: number;
  /** The appenders (lines per sync, writers) of an append measurement; 1 when absent. */
  readonly appenders?: number;
}

/** Runs one measurement in a fresh Node.js process and gives what it reported. */
function inChild(kind: Kind, file: string, n: number, appenders: number): Promise<Timing> {
  return childSays<Timing>([MEASURE, kind, file, String(n), String(appenders)], `${kind} ${file}`);
}

/** The pairs (`--paired`) or rounds (`--group-paired`) of appends in one process. */
export function pairsInChild(flag: '--paired' | '--group-paired', dir: string, n: number): Promise<Pair[]> {
  return childSays<Pair[]>([MEASURE, flag, dir, String(n)], `${flag} ${n}`);
}

/**
 * Runs each spec {@link RUNS} times, interleaved (all specs once, then again), so that a drift
 * in the machine's speed (a virtual disk's, say) reaches a figure and its limit alike.
 */
export async function rates(specs: readonly Spec[]): Promise<Rate[]> {
  const runs: number[][] = specs.map(() => []);
  const peaks: number[][] = specs.map(() => []);
  for (let run = 1; run <= RUNS; run++) {
    for (const [s, spec] of specs.entries()) {
      progress(`${spec.label}: run ${run} of ${RUNS}`);
      const { count, seconds, peakMiB } = await inChild(spec.kind, spec.file(), spec.n, spec.appenders ?? 1);
      if (spec.expected !== undefined && count !== spec.expected)
        throw new Error(`${spec.label}: ${count} records, not ${spec.expected}`);
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

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
