/**
 * `gen`: a synthetic ledger, for demos and benchmarks.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { writeJsonlWhole } from '../../../backends/jsonl-write-whole.js';
import { fillLedger } from '../../copy.js';
import { LedgerExistsError, LedgerIoError, TargetNotEmptyError } from '../../errors.js';
import { syntheticLines, workload } from '../../honcho/synthetic.js';
import { jsonlPathOf } from '../../target.js';
import { UsageError, wholeNumber } from '../args.js';
import type { Command, Context } from '../context.js';
import { grouped, plural } from '../describe.js';
import { Interrupted, stoppable, until } from '../interrupt.js';
import { backendAt } from '../open.js';

/** `gen <ledger> --records N [--seed S]`: a synthetic ledger, for demos and benchmarks. */
async function gen({ args: [path = ''], values, out, err, signals }: Context): Promise<number> {
  const recordsText = values.get('records');
  if (recordsText === undefined) throw new UsageError('gen needs --records N', 'gen');
  const records = wholeNumber('gen', 'records', recordsText);
  const seedText = values.get('seed');
  const seed = seedText === undefined ? undefined : wholeNumber('gen', 'seed', seedText);
  const progress = err.progress;
  const started = performance.now();
  let done = 0;
  const onProgress = (n: number): void => {
    done = n;
    progress.show(() => `writing ${path}: ${grouped(n)} of ${grouped(records)} records`);
  };
  const file = jsonlPathOf(path);
  let written: { records: number; bytes: number | null };
  try {
    written = await stoppable(signals, (signal) =>
      progress.around(async () =>
        // A JSONL file is written directly, much faster than through appends; other backends are filled.
        file !== null
          ? await writeJsonlWhole(file, syntheticLines({ records, seed }), { onProgress, signal })
          : { records: await fillLedger(backendAt(path), until(signal, workload({ records, seed })), onProgress), bytes: null },
      ),
    );
  } catch (e) {
    if (e instanceof Interrupted) {
      err.warn(`${path}: gen stopped by ${e.signal}; ${file !== null ? 'nothing was written' : `the ${plural(done, 'record')} written before it stay in the ledger`}`);
      return e.status;
    }
    // The writers' own words speak of a file system failure, or of a copy: say what gen refuses.
    if (e instanceof LedgerIoError && e.errno === 'EEXIST' && e.path === file) throw new LedgerExistsError(path, null, { cause: e });
    if (e instanceof TargetNotEmptyError) throw new LedgerExistsError(path, e.records, { cause: e });
    throw e;
  }
  const seconds = (performance.now() - started) / 1000;
  const size = written.bytes === null ? '' : `, ${plural(written.bytes, 'byte')}`;
  out.line(`${path}: wrote ${plural(written.records, 'record')}${size}, in ${seconds.toFixed(2)} s`);
  await out.flush();
  return 0;
}

export const GEN: Command = {
  synopsis: '<ledger> --records N [--seed S]',
  summary: 'write a realistic synthetic ledger (a new file, or an empty ledger elsewhere)',
  args: ['<ledger>'],
  flags: ['records', 'seed'],
  run: gen,
};
