/**
 * A JSONL file that is no ledger at all (a README, a binary file) is refused as such
 * (`LEDGER_NOT_A_LEDGER`, a `DamagedError` at line 1 with a runbook entry of its own), and a
 * ledger damaged in places stays damaged: a first line changed with records after it, a damaged
 * tail, zeros that a power loss left before a newline. Through the library and the CLI's bin.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonlBackend } from '../backends/jsonl.js';
import { DamagedError, DecodeError, encodeRecord, Ledger, NotALedgerError, type RecordCodec } from '../lib/index.js';
import { cli, FIXTURE_TEXT } from './support/cli.js';
import { decided, type Home, rejects, turn, withHome } from './support/ledger.js';

const README = '# ledgerstore\n\nAn event-sourced storage engine.\n\n```sh\nledgerstore counts honcho.jsonl\n```\n';

/** Some bytes of a binary file: a header, NULs, bytes that are not UTF-8, a newline or two. */
const BINARY = Buffer.concat([
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]),
  Buffer.alloc(40),
  Buffer.from([0xff, 0xfe, 0x0a, 0x80, 0x81, 0x0a, 0xc3]),
]);

/** Opens `home.path` holding `bytes`, read-only and writable: the error, each time; the file is left as it was. */
async function refusals(home: Home, bytes: string | Buffer): Promise<DamagedError[]> {
  writeFileSync(home.path, bytes);
  const found: DamagedError[] = [];
  for (const readOnly of [true, false]) {
    try {
      const ledger = await Ledger.open(home.path, { readOnly });
      await ledger.close();
      assert.unreachable(`opened ${JSON.stringify(bytes.toString().slice(0, 40))}`);
    } catch (e) {
      assert.instance(e, DamagedError, String(e));
      found.push(e as DamagedError);
    }
    assert.equal(readFileSync(home.path), Buffer.from(bytes), 'the file is left as it was');
  }
  return found;
}

test('a README and a binary file are not ledgers: LEDGER_NOT_A_LEDGER, damage at line 1, its own runbook entry', async () => {
  await withHome(async (home) => {
    for (const bytes of [README, BINARY]) {
      for (const e of await refusals(home, bytes)) {
        assert.instance(e, NotALedgerError);
        assert.is(e.code, 'LEDGER_NOT_A_LEDGER');
        assert.is(e.line, 1);
        assert.is(e.runbook, 'ledger-not-a-ledger');
        assert.ok(e.message.startsWith(`${home.path}: not a ledger: `), e.message);
        assert.ok(e.report.endsWith('; see docs/runbook.md#ledger-not-a-ledger'), e.report);
        assert.not.match(e.report, /honcho-ledger-damaged/);
        assert.match(String(e.stack), /not a ledger/);
      }
    }
  });
});

test('a ledger damaged in places stays damaged: a first line changed, a damaged tail, zeros before a newline', async () => {
  const records = FIXTURE_TEXT.split('\n').slice(0, 3);
  const cases: [string, string | Buffer, number][] = [
    ['its first line changed, records after it', `garbage\n${records.join('\n')}\n`, 1],
    ['records, then a line that is not one', `${records.join('\n')}\nnot a record\n`, 4],
    [
      'a first line of zeros (a power loss), and nothing else',
      Buffer.concat([Buffer.alloc(512), Buffer.from('\n')]),
      1,
    ],
    ["a first line that begins as a record's line does, cut in its middle", `${records[0]?.slice(0, 40)}\n`, 1],
  ];
  await withHome(async (home) => {
    for (const [what, bytes, line] of cases) {
      for (const e of await refusals(home, bytes)) {
        assert.not.instance(e, NotALedgerError, `${what}: ${e.message}`);
        assert.is(e.code, 'LEDGER_DAMAGED', what);
        assert.is(e.line, line, what);
      }
    }
  });
});

test('a record among the first 64 KiB, after lines that are not records, makes it a damaged ledger', async () => {
  await withHome(async (home) => {
    const record = encodeRecord(decided(turn('chat-1', 1)));
    const before = 'not a record, but text\n'.repeat(100);
    for (const e of await refusals(home, `${before}${record}\n`)) assert.is(e.code, 'LEDGER_DAMAGED');
    const far = 'not a record, but text\n'.repeat(4000); // past 64 KiB
    assert.ok(far.length > 64 * 1024);
    for (const e of await refusals(home, `${far}${record}\n`)) assert.is(e.code, 'LEDGER_NOT_A_LEDGER');
  });
});

test('a codec without lineStarts: no line of the sample decodes is enough', async () => {
  // records are lines of digits
  const digits: RecordCodec<number> = {
    normalize: (value) => Number(value),
    encode: (n) => String(n),
    decode: (bytes, start, end) => {
      const text = Buffer.from(bytes.subarray(start, end)).toString('utf8').trimEnd();
      if (!/^[0-9]+$/.test(text)) throw new DecodeError(`not digits: ${text}`);
      return Number(text);
    },
  };
  await withHome(async (home) => {
    writeFileSync(home.path, 'hello\nworld\n');
    await rejects(jsonlBackend(home.path, { codec: digits }).open({ readOnly: true }), 'LEDGER_NOT_A_LEDGER');
    writeFileSync(home.path, 'hello\n12\n');
    await rejects(jsonlBackend(home.path, { codec: digits }).open({ readOnly: true }), 'LEDGER_DAMAGED');
  });
});

test('the CLI says "not a ledger" of a README (exit 1, one line), and "damaged" of a damaged ledger', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, README);
    const readme = cli(['counts', home.path]);
    assert.is(readme.code, 1);
    assert.is(readme.stdout, '');
    assert.ok(readme.stderr.startsWith(`ledgerstore: ${home.path}: not a ledger: `), readme.stderr);
    assert.ok(readme.stderr.endsWith('; see docs/runbook.md#ledger-not-a-ledger\n'), readme.stderr);
    assert.is(readme.stderr.split('\n').length, 2, 'one line');
    const json = cli(['verify', home.path, '--json']);
    assert.is(json.code, 1);
    assert.is((JSON.parse(json.stdout) as { error: { code: string } }).error.code, 'LEDGER_NOT_A_LEDGER');
    writeFileSync(home.path, `${FIXTURE_TEXT}junk\n`);
    const damaged = cli(['counts', home.path]);
    assert.is(damaged.code, 1);
    assert.match(damaged.stderr, /:11: .*see docs\/runbook\.md#honcho-ledger-damaged\n$/);
  });
});

test.run();
