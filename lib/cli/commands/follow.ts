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
import { printableTarget } from '../../printable.js';
import { wholeNumber } from '../args.js';
import type { Command, Context } from '../context.js';
import { describeRecord, plural } from '../describe.js';
import { Interrupted, stoppable } from '../interrupt.js';
import { openToRead } from '../open.js';

/** A record's line: `{"position":N,"record":{...}}` for programs, else its position and the record in words. */
function lineOf({ position, record }: LogEntry, json: boolean): string {
  return json ? `{"position":${position},"record":${encodeRecord(record)}}` : `${position}  ${describeRecord(record)}`;
}

async function follow({ args: [path = ''], switches, values, out, err, signals }: Context): Promise<number> {
  const fromText = values.get('from');
  const from = fromText === undefined ? undefined : wholeNumber('follow', 'from', fromText);
  const json = switches.has('json');
  const ledger = await openToRead(path, err, values.get('index'));
  try {
    return await stoppable(signals, async (signal) => {
      // stopped by a signal, or by stdout failing under a flush that runs on its own
      const stop = new AbortController();
      signal.addEventListener('abort', () => stop.abort(signal.reason), { once: true });
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
      if (from !== undefined && from > ledger.size)
        err.warn(`${printableTarget(path)} holds ${plural(ledger.size, 'record')}; waiting for record ${from}`);
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
    "N (0 is the first record; past the ledger's end, stderr says so and it waits for that",
    'record). Each line is the position and the record in words:',
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
