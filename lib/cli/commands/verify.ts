/**
 * `verify`: reads a ledger through under the rules and says whether it is whole; with `--index`,
 * also checks that the read model answers every query as a fresh replay does.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type { HonchoLedger } from '../../honcho/ledger.js';
import type { Counts } from '../../honcho/record.js';
import { printableTarget } from '../../printable.js';
import { type AnswerDigests, answerDigests, differences, differingAnswers } from '../../verify.js';
import type { Command, Context } from '../context.js';
import { describeOutcomes, grouped, plural, shellWord } from '../describe.js';
import { countsJson, secondsJson } from '../json.js';
import { backendAt, openLedger, openToRead, requireLedgerThere } from '../open.js';

/** What a read-through found: its size and counts, how long it took, and the answers' digests if asked. */
interface Read {
  readonly records: number;
  readonly counts: Counts;
  readonly seconds: number;
  readonly digests: AnswerDigests | null;
}

/** The digests of what `ledger` answers, with their progress. */
function digestsOf(ledger: HonchoLedger, name: string, { err }: Context): Promise<AnswerDigests> {
  const progress = err.progress;
  return progress.around(async () => {
    progress.start(`digesting the answers of ${name}`, (await ledger.counts()).decided);
    return answerDigests(ledger, (done) => progress.update(done));
  });
}

/** Reads the ledger through, changing nothing (with `digests`, also the digests of every answer). */
async function readThrough(path: string, context: Context, digests: boolean): Promise<Read> {
  const started = performance.now();
  const ledger = await openToRead(path, context.err, undefined);
  try {
    const seconds = (performance.now() - started) / 1000;
    return {
      records: ledger.size,
      counts: await ledger.counts(),
      seconds,
      digests: digests ? await digestsOf(ledger, printableTarget(path), context) : null,
    };
  } finally {
    await ledger.close();
  }
}

/**
 * `verify <ledger> [--index <folder>] [--json]`: reads the whole log through and prints a
 * one-line summary; with `--index`, also brings the read model up to date and checks that it
 * answers every query as the fresh replay does. With `--json`, one JSON object, whether ok or not.
 */
async function verify(context: Context): Promise<number> {
  const {
    args: [path = ''],
    values,
    switches,
    out,
    err,
  } = context;
  backendAt(path);
  const name = printableTarget(path);
  const json = switches.has('json');
  const index = values.get('index');
  // A failure, with --json, is written as JSON by main (json.ts, failureJson), as every command's is.
  let differ: (keyof AnswerDigests)[] = [];
  await requireLedgerThere(path, 'verify');
  const read = await readThrough(path, context, index !== undefined);
  if (!json) {
    const rate = read.records > 0 && read.seconds > 0 ? ` (${grouped(read.records / read.seconds)} records/s)` : '';
    out.line(
      `${name}: ok, ${plural(read.records, 'record')}, ${plural(read.counts.decided, 'item')} decided ` +
        `${describeOutcomes(read.counts)}; read in ${read.seconds.toFixed(2)} s${rate}`,
    );
  }
  if (read.digests !== null && index !== undefined) {
    // one after the other: a LevelDB log admits one open at a time
    const withIndex = await openLedger(path, err, { readOnly: true, index });
    let fromIndex: AnswerDigests;
    try {
      fromIndex = await digestsOf(withIndex, index, context);
    } finally {
      await withIndex.close();
    }
    differ = differingAnswers(read.digests, fromIndex);
    if (differ.length > 0) {
      // what stdout holds so far goes first, where both go to one terminal
      await out.flush();
      // the password, if any, is the operator's to give (PGPASSWORD), not this line's
      const rebuild = ['ledgerstore', 'index', 'rebuild', name, '--index', index].map(shellWord).join(' ');
      err.warn(
        `${index}: the index does not answer as a fresh replay of ${name}: ${differences(read.digests, fromIndex).join(', ')} differ; rebuild it (${rebuild})`,
      );
    } else if (!json) {
      out.line(`${index}: ok, the index answers every query as a fresh replay does`);
    }
  }
  if (json) {
    const indexJson =
      index === undefined
        ? ''
        : `,"index":{"folder":${JSON.stringify(index)},"ok":${differ.length === 0}${differ.length === 0 ? '' : `,"differ":${JSON.stringify(differ)}`}}`;
    out.line(
      `{"ledger":${JSON.stringify(name)},"ok":${differ.length === 0},"records":${read.records},"counts":${countsJson(read.counts)},"seconds":${secondsJson(read.seconds)}${indexJson}}`,
    );
  }
  await out.flush();
  return differ.length === 0 ? 0 : 1;
}

export const VERIFY: Command = {
  synopsis: '<ledger> [--index <folder>] [--json]',
  summary:
    'read the ledger through; one line: ok and its counts, or the damage; with --index, check the read model against it',
  help: [
    'Reads the whole ledger through under the rules, as every open does, and says in one line that',
    'it is ok, with its counts and how long the read took; or, on stderr, the first damage: the',
    'line, what is wrong, and the runbook entry (exit 1). A ledger that is not there is exit 1 too.',
    'With --index <folder>, also brings the read model there up to date and checks that it answers',
    'every query as the fresh read does; if not, says so and how to rebuild it (exit 1).',
    'With --json, one JSON object, whatever the outcome:',
    '  {"ledger":"honcho.jsonl","ok":true,"records":10,"counts":{...},"seconds":0.012,',
    '   "index":{"folder":"idx","ok":true}}        (index: with --index; "differ":[...] when not ok)',
    '  {"ledger":"honcho.jsonl","ok":false,"error":{"code":"LEDGER_DAMAGED","message":"..."}}',
    'Changes nothing of the ledger.',
  ],
  args: ['<ledger>'],
  flags: ['index', 'json'],
  run: verify,
};
