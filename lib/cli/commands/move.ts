/**
 * The commands that take a ledger's records elsewhere: `copy` into another ledger (any backend),
 * `export` as canonical JSONL on stdout.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { type Copied, type CopyPhase, copyLedger } from '../../copy.js';
import { DestinationNotEmptyError } from '../../errors.js';
import { encodeRecord } from '../../honcho/codec.js';
import { printableTarget } from '../../printable.js';
import type { Command, Context } from '../context.js';
import { describeOutcomes, plural } from '../describe.js';
import { prepareDestination } from '../destination.js';
import { Interrupted, stoppable } from '../interrupt.js';
import { countsJson, secondsJson, writeFailureJson } from '../json.js';
import { backendAt, reading, readNotices, requireLedgerThere } from '../open.js';
import { report } from '../output.js';

/** What the progress line says of each phase of a copy to `to`. */
const PHASES: { readonly [phase in CopyPhase]: (to: string) => string } = {
  copying: (to) => `copying to ${to}`,
  'reading the copy': (to) => `checking ${to}: reading it through`,
  comparing: (to) => `checking ${to}: comparing its records with the source's`,
};

/**
 * `copy <from> <to>`: every record of one ledger into another, empty one (any backends), then
 * the copy read through again and compared with the source. A JSONL or LevelDB target is built
 * beside its name and given it only once checked: stopped (SIGINT, SIGTERM) or failed, the copy
 * removes what it built, and nothing is at the target. A PostgreSQL log is written in place,
 * marked unfinished until checked: stopped or failed, it is left refused by every open, and
 * stderr says to drop it and copy again.
 */
async function copy({ args: [from = '', to = ''], switches, out, err, signals }: Context): Promise<number> {
  const source = backendAt(from, err.progress);
  backendAt(to);
  await requireLedgerThere(from, 'copy');
  const fromName = printableTarget(from);
  const toName = printableTarget(to);
  const destination = await prepareDestination(
    to,
    err,
    async (count) => new DestinationNotEmptyError(toName, await count()),
  );
  const progress = err.progress;
  const started = performance.now();
  let copied: Copied;
  let appended = 0;
  let unfinished = false;
  try {
    copied = await stoppable(signals, async (signal) => {
      let shown: CopyPhase | null = null;
      const onProgress = (phase: CopyPhase, done: number, total: number): void => {
        if (phase !== shown) progress.start(PHASES[phase](toName), total);
        shown = phase;
        if (phase === 'copying') appended = done;
        progress.update(done);
      };
      const made = await progress.around(() =>
        copyLedger(source, destination.backend, {
          signal,
          onProgress,
          onUnfinished: () => {
            unfinished = true;
          },
        }),
      );
      // The last point at which stopping leaves nothing behind: once published, the copy is whole.
      signal.throwIfAborted();
      destination.publish();
      return made;
    });
  } catch (e) {
    const removed = destination.discard();
    const what = destination.aside
      ? `${toName} was not written${removed ? ' (what the copy had built beside it is removed)' : ''}`
      : unfinished
        ? `${toName} is left an unfinished copy (${plural(appended, 'record')} of ${fromName}), which every open refuses: run ledgerstore drop ${toName} --yes, then the copy again`
        : appended === 0
          ? `nothing was appended to ${toName}`
          : `the ${plural(appended, 'record')} it appended stay in ${toName}, which holds only part of ${fromName}: do not open it as the ledger`;
    if (e instanceof Interrupted) {
      err.warn(`copy stopped by ${e.signal}; ${what}`);
      return e.status;
    }
    if (switches.has('json')) await writeFailureJson(out, e, undefined);
    err.warn(report(e));
    err.warn(`copy stopped; ${what}`);
    return 1;
  }
  readNotices(err, from, { size: copied.records, repaired: copied.sourceRepair });
  const seconds = (performance.now() - started) / 1000;
  const c = copied.counts;
  if (switches.has('json')) {
    out.line(
      `{"from":${JSON.stringify(fromName)},"to":${JSON.stringify(toName)},"records":${copied.records},"counts":${countsJson(c)},"seconds":${secondsJson(seconds)}}`,
    );
  } else {
    out.line(
      `${toName}: copied ${plural(copied.records, 'record')} from ${fromName} in ${seconds.toFixed(2)} s, and read it back: ${c.decided} decided ${describeOutcomes(c)}`,
    );
  }
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
      progress.start(`exporting ${printableTarget(path)}`, ledger.size);
      let n = 0;
      for await (const record of ledger.records()) {
        out.line(encodeRecord(record));
        n++;
        if (out.full) {
          await out.flush();
          progress.update(n);
        }
      }
      await out.flush();
      return 0;
    }),
  );
}

export const COPY: Command = {
  synopsis: '<from> <to> [--json]',
  summary: 'copy a ledger into an empty one, on any backend, and check the copy',
  help: [
    'Copies every record of <from> into <to>, which must be a new file or folder, an empty file,',
    'an empty folder or an empty ledger, on any backend (a JSONL file to level:<folder> and back),',
    'then reads the copy through again and compares it with <from>: the same counts, the same',
    'records in the same order. A file or folder is built beside <to> (<to>.tmp-<pid>) and given',
    'its name only once checked: stopped (Ctrl-C, SIGTERM: exit 130, 143) or failed, the copy',
    'removes what it built and <to> is not written. What an earlier copy or gen that was killed',
    'left beside <to> is removed first, and stderr says so. A PostgreSQL log is written in place,',
    'marked unfinished until the copy is checked: a copy stopped, killed or failed leaves a log',
    'that every command refuses (an unfinished copy); ledgerstore drop <to> --yes removes it, and',
    'the copy can run again.',
    'With --json, one JSON object once the copy is made:',
    '  {"from":"honcho.jsonl","to":"level:copy","records":10,"counts":{...},"seconds":0.05}',
  ],
  args: ['<from>', '<to>'],
  flags: ['json'],
  run: copy,
};

export const EXPORT: Command = {
  synopsis: '<ledger>',
  summary: "the ledger's records as canonical JSONL, on stdout",
  help: [
    "Writes the ledger's records on stdout, one canonical line each, as memoryd writes them: the",
    'export of a JSONL ledger is the file itself, byte for byte, when its lines are canonical.',
  ],
  args: ['<ledger>'],
  flags: [],
  run: exportLedger,
};
