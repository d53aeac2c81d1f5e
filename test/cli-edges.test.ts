/**
 * The CLI's edges, in real processes (the real bin for the version flags and a PostgreSQL URI's
 * password, a process that stays up between commands for the rest: `cli-host.ts`): "did you mean" for a near command or flag; `-V` and
 * `version` as `--version`; a failure of every command given `--json` as one JSON object on
 * stdout; `check`'s summary line; and the facts in the help texts' examples (versions, bytes,
 * words) against what the commands really write.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COMMANDS } from '../lib/cli/commands.js';
import { describeRecord } from '../lib/cli/describe.js';
import { HONCHO_PROJECTIONS } from '../lib/honcho/read-model/state.js';
import { SCHEMA } from '../lib/projections/status.js';
import { CLI, cli, FIXTURE_TEXT, lineOf, type Run } from './support/cli.js';
import { CliHost } from './support/cli-host.js';
import { decided, turn, turnTo, withHome } from './support/ledger.js';
import { LineProcess } from './support/line-process.js';

const host = new CliHost();
test.after(() => host.stop());

/** The first line of stderr. */
const firstLine = (run: Run): string => run.stderr.slice(0, run.stderr.indexOf('\n'));

test('an unknown command or flag near a known one: "did you mean" it; one far from all: no guess', async () => {
  const cases: [readonly string[], string][] = [
    [['cunts', 'x'], 'ledgerstore: unknown command "cunts" (did you mean counts?)'],
    [['idnex', 'build'], 'ledgerstore: unknown command "idnex" (did you mean index?)'],
    [['verfy', 'x'], 'ledgerstore: unknown command "verfy" (did you mean verify?)'],
    [['conc'], 'ledgerstore: unknown command "conc" (did you mean conclusion?)'],
    [['versoin'], 'ledgerstore: unknown command "versoin" (did you mean version?)'],
    [['help', 'folow'], 'ledgerstore: unknown command "folow" (did you mean follow?)'],
    [['frob', 'x'], 'ledgerstore: unknown command "frob"'],
    [['counts', 'x', '--jsno'], 'ledgerstore: unknown flag --jsno (did you mean --json?)'],
    [['check', '--ledgr', 'x'], 'ledgerstore: unknown flag --ledgr (did you mean --ledger?)'],
    // near a flag that counts does not take: no guess that would be refused next
    [['counts', 'x', '--ledgr', 'y'], 'ledgerstore: unknown flag --ledgr'],
  ];
  for (const [args, said] of cases) {
    const run = await host.run(args);
    assert.is(run.code, 2, args.join(' '));
    assert.is(run.stdout, '');
    assert.is(firstLine(run), said, args.join(' '));
  }
});

test('-V and version are --version', () => {
  const expected = cli(['--version']);
  assert.equal(expected.code, 0);
  assert.match(expected.stdout, /^ledgerstore \d+\.\d+\.\d+\n$/);
  for (const args of [['-V'], ['version']]) assert.equal(cli(args), expected, args.join(' '));
  const extra = cli(['version', 'x']);
  assert.is(extra.code, 2);
  assert.is(firstLine(extra), 'ledgerstore: version takes no argument "x"');
  for (const args of [
    ['help', 'version'],
    ['version', '--help'],
  ]) {
    const run = cli(args);
    assert.is(run.code, 0, args.join(' '));
    assert.match(run.stdout, /ledgerstore --version \(or -V, or ledgerstore version\)/);
  }
  assert.match(cli(['--help']).stdout, /ledgerstore --version \(or -V, or ledgerstore version\)/);
});

/** What a failure with --json wrote last on stdout. */
function failureOf(run: Run): { ledger?: string; ok: boolean; error: { code: string | null; message: string } } {
  const lines = run.stdout.trimEnd().split('\n');
  return JSON.parse(lines[lines.length - 1] as string) as ReturnType<typeof failureOf>;
}

test('every command that takes --json writes its failure as one JSON object on stdout, and on stderr as before', async () => {
  await withHome(async (home) => {
    // a ledger damaged at its 11th line
    writeFileSync(home.path, `${FIXTURE_TEXT}{"type":"decided"\n`);
    const missing = join(home.dir, 'missing.jsonl');
    mkdirSync(join(home.dir, 'idx'));
    const damage = `${home.path}:11: EOF while parsing an object at line 2 column 0; see docs/runbook.md#honcho-ledger-damaged`;
    const cases: { [name: string]: [readonly string[], string, string, string | undefined] } = {
      verify: [['verify', home.path, '--json'], 'LEDGER_DAMAGED', damage, home.path],
      counts: [['counts', home.path, '--json'], 'LEDGER_DAMAGED', damage, home.path],
      outbox: [['outbox', home.path, '--json'], 'LEDGER_DAMAGED', damage, home.path],
      'sent-ids': [
        ['sent-ids', home.path, '{"type":"turn","session":"a","turn":1}', '--json'],
        'LEDGER_DAMAGED',
        damage,
        home.path,
      ],
      conclusion: [['conclusion', home.path, 'trusted', 'x', '--json'], 'LEDGER_DAMAGED', damage, home.path],
      follow: [['follow', home.path, '--json', '--from', '0'], 'LEDGER_DAMAGED', damage, home.path],
      check: [['check', '--ledger', home.path, '--json'], 'LEDGER_DAMAGED', damage, home.path],
      append: [['append', home.path, '--json'], 'LEDGER_DAMAGED', damage, home.path],
      index: [
        ['index', 'status', missing, '--index', join(home.dir, 'idx'), '--json'],
        'LEDGER_BAD_TARGET',
        `${missing}: no such file; there is no ledger to compare the index with`,
        missing,
      ],
      copy: [['copy', home.path, join(home.dir, 'copy.jsonl'), '--json'], 'LEDGER_DAMAGED', damage, undefined],
      gen: [
        ['gen', join(home.dir, 'nodir', 'g.jsonl'), '--records', '10', '--json'],
        'LEDGER_IO',
        `${join(home.dir, 'nodir', 'g.jsonl')}: no such file or directory (ENOENT)`,
        join(home.dir, 'nodir', 'g.jsonl'),
      ],
    };
    const taking = Object.entries(COMMANDS)
      .filter(([, command]) => (command.flags as readonly string[]).includes('json'))
      .map(([name]) => name);
    assert.equal(Object.keys(cases).sort(), taking.sort(), 'a case for every command that takes --json');
    for (const [name, [args, code, message, ledger]] of Object.entries(cases)) {
      const run = await host.run(args);
      assert.is(run.code, 1, `${name}: ${run.stderr}`);
      const failure = failureOf(run);
      assert.is(failure.ok, false, name);
      assert.is(failure.ledger, ledger, `${name}: the ledger it names`);
      assert.is(failure.error.code, code, name);
      assert.ok(failure.error.message.startsWith(message), `${name}: ${failure.error.message}`);
      assert.match(run.stderr, /^ledgerstore: /, `${name}: stderr says it too`);
    }
  });
});

test('a failure with --json names a PostgreSQL ledger without its password', () => {
  // nothing listens there: the connection fails at once
  const uri = 'postgres://kyle:hunter2-secret@127.0.0.1:1/db?log=honcho&connect_timeout=2';
  const run = cli(['counts', uri, '--json']);
  assert.is(run.code, 1, run.stderr);
  const failure = failureOf(run);
  assert.is(failure.ledger, 'postgres://kyle@127.0.0.1:1/db?log=honcho&connect_timeout=2');
  assert.not.ok(run.stdout.includes('hunter2') || run.stderr.includes('hunter2'), 'no password in any output');
});

test('check ends with a summary on stderr: lines, ok, refused', async () => {
  const line = lineOf(decided(turn('c', 1)));
  assert.equal(await host.run(['check'], `${line}not a record\n${line}`), {
    code: 1,
    stdout: `stdin:1: ok ${line}stdin:2: err expected ident at line 1 column 2\nstdin:3: ok ${line}`,
    stderr: 'checked 3 lines: 2 ok, 1 refused\n',
  });
  assert.equal(await host.run(['check', '--json'], line), {
    code: 0,
    stdout: `{"line":1,"ok":true,"record":${line.trimEnd()}}\n`,
    stderr: 'checked 1 line: 1 ok, 0 refused\n',
  });
  assert.match(
    (await host.run(['check', '--help'])).stdout,
    /Ends with a summary on stderr:\n {2}checked 6 lines: 4 ok, 2 refused\n/,
  );
});

test("index --help's example: the projections' versions and the schema are those index status writes", async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const index = join(home.dir, 'idx');
    assert.is((await host.run(['index', 'build', home.path, '--index', index])).code, 0);
    const status = JSON.parse((await host.run(['index', 'status', home.path, '--index', index, '--json'])).stdout) as {
      schema: number;
      ledgerstoreSchema: number;
      projections: { name: string; version: number }[];
    };
    const helped = (await host.run(['index', '--help'])).stdout;
    assert.ok(helped.includes(`"schema":${status.schema},"ledgerstoreSchema":${status.ledgerstoreSchema}`), helped);
    assert.is(status.schema, SCHEMA);
    const example = /\{"name":"(\w+)","version":(\d+),"state":"ready","why":null\}/.exec(helped);
    assert.ok(example !== null, 'the example names a projection');
    const [, name, version] = example;
    assert.is(Number(version), status.projections.find((p) => p.name === name)?.version, `${name}'s version`);
    assert.is(Number(version), HONCHO_PROJECTIONS.find((p) => p.name === name)?.version);
  });
});

test("gen --help's example: the bytes of 200,000 records of the default seed", async () => {
  await withHome(async (home) => {
    const example = /\{"ledger":"demo\.jsonl","records":(\d+),"bytes":(\d+),/.exec(
      (await host.run(['gen', '--help'])).stdout,
    );
    assert.ok(example !== null);
    const [, records = '', bytes = ''] = example;
    const run = await host.run(['gen', home.path, '--records', records, '--json']);
    assert.is(run.code, 0, run.stderr);
    const made = JSON.parse(run.stdout) as { records: number; bytes: number };
    assert.equal([made.records, made.bytes], [Number(records), Number(bytes)]);
  });
});

test("follow --help's example line is a record in follow's words, and what a follower prints", async () => {
  const record = decided(turn('chat-1', 3), turnTo('trusted', 'kyle'));
  assert.match((await host.run(['follow', '--help'])).stdout, new RegExp(`\n {2}12 {2}${describeRecord(record)}\n`));
  await withHome(async (home) => {
    writeFileSync(home.path, lineOf(record));
    const follow = new LineProcess([CLI, 'follow', home.path, '--from', '0'], 'follower');
    try {
      await follow.waitFor((lines) => lines.length === 1, 'the record');
    } finally {
      follow.process.kill('SIGINT');
      await follow.exited;
    }
    assert.equal(follow.lines, [`0  ${describeRecord(record)}`]);
  });
});

test.run();
