/**
 * `gen`: a synthetic ledger, for demos and benchmarks, built aside and given its name once whole.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { writeJsonlFile } from '../../../backends/jsonl-write-whole.js';
import { fillLedger } from '../../copy.js';
import { DestinationNotEmptyError, LedgerExistsError, LedgerIoError } from '../../errors.js';
import { syntheticLines, workload } from '../../honcho/synthetic.js';
import { printableTarget } from '../../printable.js';
import { jsonlPathOf } from '../../target.js';
import { UsageError, wholeNumber } from '../args.js';
import type { Command, Context } from '../context.js';
import { plural } from '../describe.js';
import { prepareDestination } from '../destination.js';
import { Interrupted, stoppable } from '../interrupt.js';
import { secondsJson, writeFailureJson } from '../json.js';
import { report } from '../output.js';

/** `gen <ledger> --records N [--seed S]`: a synthetic ledger, for demos and benchmarks. */
async function gen({ args: [path = ''], values, switches, out, err, signals }: Context): Promise<number> {
  const recordsText = values.get('records');
  if (recordsText === undefined) throw new UsageError('gen needs --records N', 'gen');
  const records = wholeNumber('gen', 'records', recordsText);
  const seedText = values.get('seed');
  const seed = seedText === undefined ? undefined : wholeNumber('gen', 'seed', seedText);
  const file = jsonlPathOf(path);
  const name = printableTarget(path);
  // A file that is there is not read: whatever it holds, gen does not write over it.
  const destination = await prepareDestination(
    path,
    err,
    async (count) => new LedgerExistsError(name, file === null ? await count() : null),
  );
  const progress = err.progress;
  const started = performance.now();
  let done = 0;
  let unfinished = false;
  const onProgress = (n: number): void => {
    done = n;
    progress.update(n);
  };
  let written: { records: number; bytes: number | null };
  try {
    written = await stoppable(signals, async (signal) => {
      progress.start(`writing ${name}`, records);
      const made = await progress.around(async () =>
        // A JSONL file is written directly, much faster than through appends; other backends are filled.
        destination.file !== null
          ? await writeJsonlFile(destination.file, syntheticLines({ records, seed }), {
              onProgress,
              signal,
              builtFor: path,
            })
          : {
              records: await fillLedger(destination.backend, workload({ records, seed }), onProgress, signal, () => {
                unfinished = true;
              }),
              bytes: null,
            },
      );
      // The last point at which stopping leaves nothing behind: once published, the ledger is whole.
      signal.throwIfAborted();
      destination.publish();
      return made;
    });
  } catch (e) {
    const removed = destination.discard();
    const what = unfinished
      ? `${name} is left an unfinished copy (${plural(done, 'record')}), which every open refuses: run ledgerstore drop ${name} --yes, then gen again`
      : !destination.aside
        ? `the ${plural(done, 'record')} written before it stay in the ledger`
        : `nothing was written${removed ? ' (what gen had built beside it is removed)' : ''}`;
    if (e instanceof Interrupted) {
      err.warn(`${name}: gen stopped by ${e.signal}; ${what}`);
      return e.status;
    }
    // A file that appeared meanwhile: say what gen refuses, not what the file system said.
    if (e instanceof LedgerIoError && e.errno === 'EEXIST' && e.path === file)
      throw new LedgerExistsError(name, null, { cause: e });
    if (e instanceof DestinationNotEmptyError) throw new LedgerExistsError(name, e.records, { cause: e });
    if (switches.has('json')) await writeFailureJson(out, e, path);
    err.warn(report(e));
    err.warn(`${name}: gen stopped; ${what}`);
    return 1;
  }
  const seconds = (performance.now() - started) / 1000;
  if (switches.has('json')) {
    out.line(
      `{"ledger":${JSON.stringify(name)},"records":${written.records},"bytes":${written.bytes ?? 'null'},"seconds":${secondsJson(seconds)}}`,
    );
  } else {
    const size = written.bytes === null ? '' : `, ${plural(written.bytes, 'byte')}`;
    out.line(`${name}: wrote ${plural(written.records, 'record')}${size}, in ${seconds.toFixed(2)} s`);
  }
  await out.flush();
  return 0;
}

export const GEN: Command = {
  synopsis: '<ledger> --records N [--seed S] [--json]',
  summary: 'write a realistic synthetic ledger (a new file, or an empty ledger elsewhere)',
  help: [
    "Writes a synthetic ledger of N records shaped like memoryd's (sessions, memory edits, sends",
    'and failures, an outbox at the end), valid under the rules; the same seed (default 1) gives',
    'the same bytes. The ledger must be new, an empty file, an empty folder or an empty ledger.',
    'A file or folder is built beside it (<ledger>.tmp-<pid>) and given its name once whole:',
    'stopped (Ctrl-C, SIGTERM: exit 130, 143) or failed, nothing is written. What an earlier',
    'gen or copy that was killed left beside it is removed first, and stderr says so. A',
    'PostgreSQL log is written in place, marked unfinished until its last record is: stopped or',
    'killed, gen leaves a log every command refuses; ledgerstore drop <ledger> --yes removes it.',
    'With --json, one JSON object once it is written ("bytes" is null but for a JSONL file):',
    '  {"ledger":"demo.jsonl","records":200000,"bytes":33087130,"seconds":1.52}',
  ],
  args: ['<ledger>'],
  flags: ['records', 'seed', 'json'],
  run: gen,
};
