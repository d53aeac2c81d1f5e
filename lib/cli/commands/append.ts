/**
 * `append`: record lines from stdin into a ledger, each durable before the next.
 *
 * @module
 */
import { DecodeError, LedgerError } from '../../errors.js';
import { decodeRecord } from '../../honcho/codec.js';
import type { Record } from '../../honcho/record.js';
import { printableTarget } from '../../printable.js';
import type { Command, Context } from '../context.js';
import { plural } from '../describe.js';
import { inputLines } from '../input.js';
import { errorJson } from '../json.js';
import { openLedger } from '../open.js';
import { report } from '../output.js';

/** Whether a line holds nothing but JSON's whitespace (an empty line, `\r\n`, spaces). */
function blank(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  return true;
}

/**
 * `append <ledger> [--json]`: the record lines on stdin, each appended and durable before the
 * next. The first that does not decode or is refused stops it; the ones before it stay. A blank
 * line is no record and no mistake: it is skipped, and stderr says so.
 */
async function append({ args: [path = ''], values, switches, out, err, stdin }: Context): Promise<number> {
  const progress = err.progress;
  const name = printableTarget(path);
  const ledger = await openLedger(path, err, { readOnly: false, index: values.get('index') });
  const repair = ledger.repaired;
  if (repair !== null)
    err.warn(`${name}: a last line cut off by a crash (${plural(repair.dropped, 'byte')}) was dropped`);
  let line = 0;
  let appended = 0;
  const skipped: number[] = [];
  let stopped: LedgerError | null = null;
  // How many lines stdin holds is not known until it ends.
  progress.start(`appending to ${name}`, undefined);
  try {
    for await (const bytes of inputLines(stdin)) {
      line++;
      if (blank(bytes)) {
        skipped.push(line);
        continue;
      }
      let record: Record;
      try {
        record = decodeRecord(bytes);
      } catch (e) {
        if (e instanceof DecodeError) throw new DecodeError(`stdin:${line}: ${e.message}`);
        throw e;
      }
      await ledger.append(record);
      appended++;
      progress.update(appended);
    }
  } catch (e) {
    if (!(e instanceof LedgerError)) throw e;
    stopped = e;
  } finally {
    progress.clear();
    await ledger.close();
  }
  if (skipped.length > 0)
    err.warn(
      `skipped ${plural(skipped.length, 'blank line')} of stdin (${skipped.length === 1 ? '' : 'the first at '}stdin:${skipped[0]})`,
    );
  if (switches.has('json')) {
    const stop = stopped === null ? '' : `,"stopped":{"line":${line},"error":${errorJson(stopped)}}`;
    out.line(`{"ledger":${JSON.stringify(name)},"appended":${appended},"skipped":${JSON.stringify(skipped)}${stop}}`);
    await out.flush();
  }
  if (stopped !== null) {
    err.warn(report(stopped));
    const before =
      appended === 0
        ? 'nothing was appended'
        : `the ${plural(appended, 'record')} before it ${appended === 1 ? 'was' : 'were'} appended`;
    err.warn(`stopped at stdin:${line}; ${before}`);
    return 1;
  }
  err.write(`appended ${plural(appended, 'record')} to ${name}\n`);
  return 0;
}

export const APPEND: Command = {
  synopsis: '<ledger> [--index <folder>] [--json]',
  summary: 'append the record lines on stdin, each durable before the next',
  help: [
    'Appends each record line on stdin to the ledger, in order, each on disk before the next is',
    'read. A line is read as serde_json reads a record (any key order, whitespace) and written in',
    'its canonical form. The first line that is not a record, or that the rules refuse, stops it',
    '(exit 1): the lines before it stay appended, and stderr says which line it was. Blank lines',
    'are skipped, and stderr says so. The last line needs no newline. A ledger that is not there',
    'is made at the first record. Says on stderr how many records it appended.',
    'With --json, also one JSON object on stdout at the end ("stopped" only when a line stopped it):',
    '  {"ledger":"honcho.jsonl","appended":2,"skipped":[3],"stopped":{"line":5,"error":{"code":...}}}',
  ],
  args: ['<ledger>'],
  flags: ['index', 'json'],
  run: append,
};
