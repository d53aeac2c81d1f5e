/**
 * `append`: record lines from stdin into a ledger, each durable before the next.
 *
 * @module
 */
import { DecodeError } from '../../errors.js';
import { decodeRecord } from '../../honcho/codec.js';
import type { Record } from '../../honcho/record.js';
import type { Command, Context } from '../context.js';
import { grouped, plural } from '../describe.js';
import { inputLines } from '../input.js';
import { openLedger } from '../open.js';
import { report } from '../output.js';

/**
 * `append <ledger>`: the record lines on stdin, each appended and durable before the next. The
 * first that does not decode or is refused stops it; the ones before it stay.
 */
async function append({ args: [path = ''], values, err, stdin }: Context): Promise<number> {
  const progress = err.progress;
  const ledger = await openLedger(path, err, { readOnly: false, index: values.get('index') });
  const repair = ledger.repair;
  if (repair !== null) err.warn(`${path}: a last line cut off by a crash (${plural(repair.dropped, 'byte')}) was dropped`);
  let line = 0;
  let appended = 0;
  try {
    for await (const bytes of inputLines(stdin)) {
      line++;
      let record: Record;
      try {
        record = decodeRecord(bytes);
      } catch (e) {
        if (e instanceof DecodeError) throw new DecodeError(`stdin:${line}: ${e.message}`);
        throw e;
      }
      await ledger.append(record);
      appended++;
      progress.show(() => `appending to ${path}: ${grouped(appended)} records`);
    }
  } catch (e) {
    err.warn(report(e));
    const before = appended === 0 ? 'nothing was appended' : `the ${plural(appended, 'record')} before it ${appended === 1 ? 'was' : 'were'} appended`;
    err.warn(`stopped at stdin:${line}; ${before}`);
    return 1;
  } finally {
    await ledger.close();
  }
  err.write(`appended ${plural(appended, 'record')} to ${path}\n`);
  return 0;
}

export const APPEND: Command = {
  synopsis: '<ledger> [--index <folder>]',
  summary: 'append the record lines on stdin, each durable before the next',
  args: ['<ledger>'],
  flags: ['index'],
  run: append,
};
