/**
 * `follow <ledger> [--from N] [--json] [--index <folder>]`: the ledger's records as they land,
 * like `tail -f`, whoever appends them (memoryd beside it on a JSONL file, other processes on
 * PostgreSQL). The ledger is opened read-only and followed through its `follow()`: each record
 * is checked against the rules as it is taken in, and one that breaks them ends the command
 * with the damage (exit 1).
 *
 * Lines go out whole (a line and its newline in one write), as soon as no more records are at
 * hand; a reader that falls behind holds the command back, not its memory. It runs until it is
 * stopped: SIGINT or SIGTERM (exit 130 or 143, what was printed flushed), or a reader that goes
 * away (exit 0, at the next record it would print).
 *
 * @module
 */
import { encodeRecord } from '../../honcho/codec.js';
import type { LogEntry } from '../../honcho/ledger.js';
import type { Position } from '../../log.js';
import { printableTarget } from '../../printable.js';
import { wholeNumber } from '../args.js';
import type { Command, Context } from '../context.js';
import { describeRecord, plural } from '../describe.js';
import { Interrupted, stoppable } from '../interrupt.js';
import { type Absence, backendAt, ledgerAbsence, NoLedgerError, openLedger, readNotices } from '../open.js';

/** A record's line: `{"position":N,"record":{...}}` for programs, else its position and the record in words. */
function lineOf({ position, record }: LogEntry, json: boolean): string {
  return json ? `{"position":${position},"record":${encodeRecord(record)}}` : `${position}  ${describeRecord(record)}`;
}

/**
 * What stderr says as the follower starts (it prints nothing until a record lands, and would
 * look hung): what it follows, from which record, and why it waits when it does.
 */
function startWords(name: string, from: Position, size: Position, absent: Absence | null, fromGiven: boolean): string {
  const start = `following ${name} from record ${from}`;
  if (absent !== null) return `${start}: ${absent.why} yet; waiting for it to be made (Ctrl-C stops)`;
  if (from > size) return `${start}: it holds ${plural(size, 'record')}; waiting for record ${from} (Ctrl-C stops)`;
  return `${start}${fromGiven ? '' : ', its end'} (Ctrl-C stops)`;
}

async function follow({ args: [path = ''], switches, values, out, err, signals }: Context): Promise<number> {
  const fromText = values.get('from');
  const from = fromText === undefined ? undefined : wholeNumber('follow', 'from', fromText);
  const json = switches.has('json');
  const index = values.get('index');
  backendAt(path);
  // A file not made yet, in a folder that is there, or a PostgreSQL log no writer has made yet,
  // may be followed: memoryd makes its ledger at its first record. Anything else that is not
  // there is a typo, and a read model is not made of nothing.
  const absent = await ledgerAbsence(path);
  if (absent !== null && (!absent.mayAppear || index !== undefined))
    throw new NoLedgerError(path, absent.why, 'follow');
  const ledger = await openLedger(path, err, { readOnly: true, index });
  if (absent === null) readNotices(err, path, ledger);
  try {
    return await stoppable(signals, async (signal) => {
      // stopped by a signal, or by stdout failing under a flush that runs on its own
      const stop = new AbortController();
      signal.addEventListener('abort', () => stop.abort(signal.reason), { once: true });
      // said once a stop is heeded, so that Ctrl-C on reading it is never lost
      err.warn(startWords(printableTarget(path), from ?? ledger.size, ledger.size, absent, from !== undefined));
      let flushing: Promise<void> | null = null;
      let failure: unknown = null;
      // once the records at hand are gathered: what a page of a catch-up holds goes out in one write
      const flushSoon = (): void => {
        flushing ??= new Promise((resolve) => setImmediate(resolve))
          .then(() => out.flush())
          .catch((e: unknown) => {
            failure ??= e;
            stop.abort(e);
          })
          .finally(() => {
            flushing = null;
          });
      };
      for await (const entry of ledger.follow(from ?? ledger.size, stop.signal)) {
        out.line(lineOf(entry, json));
        if (out.full) await out.flush();
        else flushSoon();
      }
      await flushing;
      if (failure !== null) throw failure;
      await out.flush();
      if (signal.reason instanceof Interrupted) return signal.reason.status;
      return 0;
    });
  } finally {
    await ledger.close();
  }
}

export const FOLLOW: Command = {
  synopsis: '<ledger> [--from N] [--json] [--index <folder>]',
  summary: 'the records as they land, like tail -f, whoever appends them',
  help: [
    "Prints the ledger's records as they are appended, one a line, until stopped (Ctrl-C or",
    'SIGTERM: exit 130 or 143, or a reader that goes away: exit 0, at the next record it would',
    'print): those memoryd appends beside it to a JSONL file, those any process appends to a',
    'PostgreSQL ledger. From the end of the ledger when it opens, or with --from N from position',
    "N (0 is the first record; past the ledger's end, it waits for that record). As it starts,",
    'stderr says what it follows and from which record. A JSONL file that is not there yet, in a',
    'folder that is, and a PostgreSQL log that no writer has made yet are followed from record 0',
    'once made, and stderr says it waits for them; any other ledger that is not there (a missing',
    'folder, a level: folder without a ledger, or with --index) is exit 1.',
    'Each line is the position and the record in words:',
    '  12  decided turn 3 of session chat-1 -> turn to trusted as kyle',
    'With --json, JSON Lines: the position and the record in its canonical form:',
    '  {"position":12,"record":{"type":"decided",...}}',
    'A line goes out whole, never without its newline, and only once the record is durable and',
    'checked against the rules: a record that breaks them ends the command (exit 1).',
  ],
  args: ['<ledger>'],
  flags: ['json', 'index', 'from'],
  run: follow,
};
