/**
 * `check`: whether each record line on stdin is a record, and with `--ledger`, whether a ledger
 * would take it: each line is checked against the rules as if appended after the ledger's
 * records and after the lines before it that were accepted. Nothing is written anywhere.
 *
 * @module
 */
import { LedgerError } from '../../errors.js';
import { decodeRecord, encodeRecord } from '../../honcho/codec.js';
import { Projection } from '../../honcho/projection.js';
import { refusal } from '../../honcho/rules.js';
import type { Command, Context } from '../context.js';
import { plural } from '../describe.js';
import { inputLines } from '../input.js';
import { backendAt, readNotices, requireLedgerThere } from '../open.js';
import type { Stderr } from '../output.js';

/**
 * The state of the ledger at `path`, read through under the rules as every open does, to check
 * lines against; changing nothing.
 */
async function stateOf(path: string, err: Stderr): Promise<Projection> {
  const backend = backendAt(path, err.progress);
  await requireLedgerThere(path, 'check against');
  const projection = new Projection();
  const log = await err.progress.around(() =>
    backend.open({
      readOnly: true,
      replay: (record) => {
        const refused = refusal(record, projection.stateOf(record.item));
        if (refused !== null) throw refused;
        projection.apply(record);
      },
    }),
  );
  readNotices(err, path, { size: log.head, repaired: log.repaired });
  await log.close();
  return projection;
}

/**
 * `check [--ledger <ledger>] [--json]`: each record line on stdin, as `stdin:<n>: ok <canonical
 * line>` or `stdin:<n>: err <why>` (with `--json`, one JSON object a line), then a summary on
 * stderr; exit 1 when any is refused.
 */
async function check({ values, switches, out, err, stdin }: Context): Promise<number> {
  const ledger = values.get('ledger');
  const state = ledger === undefined ? null : await stateOf(ledger, err);
  const json = switches.has('json');
  let line = 0;
  let refused = 0;
  for await (const bytes of inputLines(stdin)) {
    line++;
    try {
      const record = decodeRecord(bytes);
      if (state !== null) {
        const broken = refusal(record, state.stateOf(record.item));
        if (broken !== null) throw broken;
        state.apply(record);
      }
      const canonical = encodeRecord(record);
      out.line(json ? `{"line":${line},"ok":true,"record":${canonical}}` : `stdin:${line}: ok ${canonical}`);
    } catch (e) {
      if (!(e instanceof LedgerError)) throw e;
      refused++;
      out.line(
        json
          ? `{"line":${line},"ok":false,"code":${JSON.stringify(e.code)},"error":${JSON.stringify(e.message)}}`
          : `stdin:${line}: err ${e.message}`,
      );
    }
    if (out.full) await out.flush();
  }
  await out.flush();
  // the end of a check: how many, where the verdicts may have scrolled past
  err.write(`checked ${plural(line, 'line')}: ${line - refused} ok, ${refused} refused\n`);
  return refused === 0 ? 0 : 1;
}

export const CHECK: Command = {
  synopsis: '[--ledger <ledger>] [--json]',
  summary:
    'each record line on stdin: "stdin:<n>: ok <canonical line>" or "stdin:<n>: err <why>"; with --ledger, checked against its rules too',
  help: [
    'Says of each line on stdin whether it is a record, as memoryd reads one:',
    '  stdin:<n>: ok <the line as it would be written>    or    stdin:<n>: err <why>',
    'With --ledger <ledger>, each line is also checked against the rules as if it were appended',
    "after the ledger's records and after the lines before it that were ok (a refused line counts",
    'for nothing). Nothing is written anywhere. Ends with a summary on stderr:',
    '  checked 6 lines: 4 ok, 2 refused',
    'Exit 1 when any line is refused.',
    'With --json, JSON Lines: one JSON object a line,',
    '  {"line":1,"ok":true,"record":{...}}    or    {"line":3,"ok":false,"code":"LEDGER_DECODE","error":"..."}',
  ],
  args: [],
  flags: ['ledger', 'json'],
  run: check,
};
