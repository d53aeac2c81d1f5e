/**
 * `verify`: reads a ledger through under the rules and says whether it is whole; with `--index`,
 * also checks that the read model answers every query as a fresh replay does.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { type AnswerDigests, answerDigests, differences } from '../../verify.js';
import type { Command, Context } from '../context.js';
import { describeOutcomes, grouped, plural, shellWord } from '../describe.js';
import { backendAt, openLedger, openToRead, requireLedger } from '../open.js';

/**
 * `verify <ledger> [--index <folder>]`: reads the whole log through and prints a one-line
 * summary; with `--index`, also brings the read model up to date and checks that it answers
 * every query as the fresh replay does.
 */
async function verify({ args: [path = ''], values, out, err }: Context): Promise<number> {
  backendAt(path);
  requireLedger(path, 'verify');
  const started = performance.now();
  const ledger = await openToRead(path, err, undefined);
  let replayed: AnswerDigests | null = null;
  try {
    const seconds = (performance.now() - started) / 1000;
    const c = await ledger.counts();
    const rate = ledger.size > 0 && seconds > 0 ? ` (${grouped(ledger.size / seconds)} records/s)` : '';
    out.line(
      `${path}: ok, ${plural(ledger.size, 'record')}, ${plural(c.decided, 'item')} decided ` +
        `${describeOutcomes(c)}; read in ${seconds.toFixed(2)} s${rate}`,
    );
    if (values.has('index')) replayed = await answerDigests(ledger);
  } finally {
    await ledger.close();
  }
  const index = values.get('index');
  if (replayed !== null && index !== undefined) {
    // one after the other: a LevelDB log admits one open at a time
    const withIndex = await openLedger(path, err, { readOnly: true, index });
    let fromIndex: AnswerDigests;
    try {
      fromIndex = await answerDigests(withIndex);
    } finally {
      await withIndex.close();
    }
    const differ = differences(replayed, fromIndex);
    if (differ.length > 0) {
      await out.flush();
      const rebuild = ['ledgerstore', 'index', 'rebuild', path, '--index', index].map(shellWord).join(' ');
      err.warn(`${index}: the index does not answer as a fresh replay of ${path}: ${differ.join(', ')} differ; rebuild it (${rebuild})`);
      return 1;
    }
    out.line(`${index}: ok, the index answers every query as a fresh replay does`);
  }
  await out.flush();
  return 0;
}

export const VERIFY: Command = {
  synopsis: '<ledger> [--index <folder>]',
  summary: 'read the ledger through; one line: ok and its counts, or the damage; with --index, check the read model against it',
  args: ['<ledger>'],
  flags: ['index'],
  run: verify,
};
