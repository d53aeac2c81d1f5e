/**
 * Runs the fuzz harnesses' fast-check properties, each in a worker thread under a watchdog, so
 * that an input that makes the code under test loop forever fails the test (with the seed that
 * finds it again) instead of hanging the run: a loop in synchronous code cannot be interrupted
 * from its own thread.
 *
 * Seeds are fixed: each property's seed is derived from its name and `LEDGERSTORE_FUZZ_SEED`
 * (default below), so a run is the same every time; set `LEDGERSTORE_FUZZ_SEED` to explore
 * other inputs. The counts are multiplied by `LEDGERSTORE_TORTURE` (`scale.ts`).
 */

import { Worker } from 'node:worker_threads';
import * as fc from 'fast-check';
import { SCALE, scaled } from './scale.js';
import { FUZZ_SEED } from './seed.js';

/** What a property module's runner is given. */
export interface CheckParams {
  readonly seed: number;
  readonly numRuns: number;
  /** A temporary directory the property may use (made and removed by the caller). */
  readonly dir: string;
}

/** How a property run went. */
export interface PropertyReport {
  readonly failed: boolean;
  /** Runs made (up to and including the failing one). */
  readonly runs: number;
  readonly seed: number;
  /** fast-check's report of a failure (the seed, the path, the shrunk counterexample, the error); empty when it passed. */
  readonly message: string;
  /** What the inputs did, by kind: for the figures. */
  readonly stats: { readonly [what: string]: number };
}

/** A property module exports `properties`: runners by name. */
export type PropertyRunner = (params: CheckParams) => Promise<PropertyReport>;

/** A counter of what inputs did, for a property's `stats`. */
export class Tally {
  readonly counts: { [what: string]: number } = {};
  add(what: string): void {
    this.counts[what] = (this.counts[what] ?? 0) + 1;
  }
}

/** A property's outcome as a report. */
export function report<T>(details: fc.RunDetails<T>, tally: Tally): PropertyReport {
  return {
    failed: details.failed,
    runs: details.numRuns,
    seed: details.seed,
    message: details.failed ? (fc.defaultReportMessage(details) ?? 'failed') : '',
    stats: tally.counts,
  };
}

/** The fixed seed of the property `name`: FNV-1a of the name, mixed with the base seed. */
export function seedFor(name: string): number {
  let h = 0x811c9dc5 ^ (FUZZ_SEED | 0) ^ Math.floor(FUZZ_SEED / 0x1_0000_0000);
  for (let n = 0; n < name.length; n++) h = Math.imul(h ^ name.charCodeAt(n), 0x01000193);
  return h | 0;
}

const WORKER = new URL('./fuzz-worker.js', import.meta.url);

/**
 * Runs the property `name` of the module at `module` in a worker, `runs` times the scale, with
 * its fixed seed. A worker that has not answered after `timeoutSeconds` (times the scale; a hang
 * guard only) is stopped and the run fails, naming the seed.
 */
export function checkInWorker(
  module: URL,
  name: string,
  runs: number,
  dir: string,
  timeoutSeconds = 120,
): Promise<PropertyReport> {
  const seed = seedFor(name);
  const numRuns = scaled(runs);
  const limit = timeoutSeconds * SCALE;
  return new Promise<PropertyReport>((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { module: module.href, name, seed, numRuns, dir } });
    let settled = false;
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      f();
    };
    const watchdog = setTimeout(() => {
      settle(() =>
        reject(
          new Error(
            `${name}: no answer after ${limit} s, a hang? (seed ${seed}, ${numRuns} runs; LEDGERSTORE_FUZZ_SEED=${FUZZ_SEED})`,
          ),
        ),
      );
      void worker.terminate();
    }, limit * 1000);
    worker.once('message', (answer: PropertyReport) => settle(() => resolve(answer)));
    worker.once('error', (e) =>
      settle(() => reject(new Error(`${name}: the worker crashed (seed ${seed}): ${e.stack ?? String(e)}`))),
    );
    worker.once('exit', (code) =>
      settle(() => reject(new Error(`${name}: the worker exited with ${code} without answering (seed ${seed})`))),
    );
  });
}

/** One line for the run's output: the property, its runs and seed, and what its inputs did. */
export function describeRun(title: string, r: PropertyReport): string {
  const stats = Object.entries(r.stats)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([what, n]) => `${what} ${n}`)
    .join(', ');
  return `  fuzz ${title}: ${r.runs} runs, seed ${r.seed}${stats === '' ? '' : ` (${stats})`}`;
}
