/**
 * The commands that take a ledger's records elsewhere: `copy` into another ledger (any backend),
 * `export` as canonical JSONL on stdout.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { copyLedger } from '../../copy.js';
import { encodeRecord } from '../../honcho/codec.js';
import type { Command, Context } from '../context.js';
import { describeOutcomes, grouped, plural } from '../describe.js';
import { backendAt, readNotices, reading } from '../open.js';

/**
 * `copy <from> <to>`: every record of one ledger into another, empty one (any backends), then
 * the target read through again and compared with the source.
 */
async function copy({ args: [from = '', to = ''], out, err }: Context): Promise<number> {
  const progress = err.progress;
  const started = performance.now();
  const copied = await progress.around(() =>
    copyLedger(backendAt(from, progress), backendAt(to), (n) => progress.show(() => `copying to ${to}: ${grouped(n)} records`)),
  );
  readNotices(err, from, { size: copied.records, repair: copied.sourceRepair });
  const seconds = (performance.now() - started) / 1000;
  const c = copied.counts;
  out.line(`${to}: copied ${plural(copied.records, 'record')} from ${from} in ${seconds.toFixed(2)} s, and read it back: ${c.decided} decided ${describeOutcomes(c)}`);
  await out.flush();
  return 0;
}

/** `export <ledger>`: the ledger's records as canonical JSONL, on stdout. */
async function exportLedger(context: Context): Promise<number> {
  const {
    args: [path = ''],
    out,
    progress,
  } = context;
  // The progress line is redrawn as lines go out; it must come off once the last one has.
  return reading(context, (ledger) =>
    progress.around(async () => {
      let n = 0;
      for await (const record of ledger.records()) {
        out.line(encodeRecord(record));
        if (out.full) {
          await out.flush();
          progress.show(() => `exporting ${path}: ${grouped(n)} records`);
        }
        n++;
      }
      await out.flush();
      return 0;
    }),
  );
}

export const COPY: Command = {
  synopsis: '<from> <to>',
  summary: 'copy a ledger into an empty one, on any backend, and check the copy',
  args: ['<from>', '<to>'],
  flags: [],
  run: copy,
};

export const EXPORT: Command = {
  synopsis: '<ledger>',
  summary: "the ledger's records as canonical JSONL, on stdout",
  args: ['<ledger>'],
  flags: [],
  run: exportLedger,
};
