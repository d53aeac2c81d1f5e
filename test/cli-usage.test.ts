/**
 * The command line's usage: mistakes exit 2 with the usage on stderr and change nothing; help
 * goes to stdout. Run in process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COMMANDS, type CommandName, synopsisOf } from '../lib/cli/commands.js';
import { expectRun, FIXTURE_TEXT, ledgerstore, unchanged, withFixture } from './support/cli.js';

const NAMES = Object.keys(COMMANDS) as CommandName[];

test('a ledger that names no ledger is a usage error', async () => {
  for (const target of ['level:', 'memory:x', 'jsonl:']) {
    const run = await ledgerstore(['counts', target]);
    assert.is(run.code, 2, target);
    assert.match(run.stderr, /a ledger is a path, jsonl:<path>, level:<folder>, memory: or postgres:/);
  }
});

test('a target with a scheme no ledger has is a usage error, not an empty ledger at a relative path', async () => {
  for (const target of ['lvl:foo', 'file:///tmp/x.jsonl', 'http://db/x']) {
    const run = await ledgerstore(['counts', target]);
    assert.is(run.code, 2, target);
    assert.match(run.stderr, /no ledger has the scheme [a-z]+: \(a file of that name is \.\//);
    assert.is(run.stdout, '');
  }
});

test("a command's help tells of --index only where the command takes it", async () => {
  for (const name of NAMES) {
    const run = await ledgerstore([name, '--help']);
    assert.is(run.code, 0, name);
    const takes = (COMMANDS[name].flags as readonly string[]).includes('index');
    assert.is(run.stdout.includes('With --index <folder>, a ledger keeps its state'), takes, name);
  }
});

test('usage errors exit 2 with a usage text on stderr and nothing on stdout', async () => {
  await withFixture(async (home) => {
    const mistakes: [readonly string[], string][] = [
      [[], 'ledgerstore: no command given\n'],
      [['frob', home.path], 'ledgerstore: unknown command "frob"\n'],
      [['counts'], 'ledgerstore: counts needs <ledger>\n'],
      [['counts', home.path, 'extra'], 'ledgerstore: counts takes no argument "extra"\n'],
      [['counts', home.path, '--bogus'], 'ledgerstore: unknown flag --bogus\n'],
      [['counts', home.path, '-j'], 'ledgerstore: unknown flag -j\n'],
      [['counts', home.path, '--json=yes'], 'ledgerstore: --json takes no value\n'],
      [['export', home.path, '--json'], 'ledgerstore: export takes no --json\n'],
      [
        ['index', 'build', home.path, '--index', join(home.dir, 'index'), '--json'],
        'ledgerstore: index build takes no --json (index status does)\n',
      ],
      [['counts', home.path, '--version'], 'ledgerstore: counts takes no --version\n'],
      [['sent-ids', home.path], 'ledgerstore: sent-ids needs <item-as-json>\n'],
      [['conclusion', home.path, 'trusted'], 'ledgerstore: conclusion needs <text>\n'],
      [['check', home.path], `ledgerstore: check takes no argument ${JSON.stringify(home.path)}\n`],
      [['gen', join(home.dir, 'g.jsonl')], 'ledgerstore: gen needs --records N\n'],
      [['gen', join(home.dir, 'g.jsonl'), '--records'], 'ledgerstore: --records needs a value\n'],
      [
        ['gen', join(home.dir, 'g.jsonl'), '--records', 'ten'],
        `ledgerstore: --records must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not "ten"\n`,
      ],
      [
        ['gen', join(home.dir, 'g.jsonl'), '--records', '1.5'],
        `ledgerstore: --records must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not "1.5"\n`,
      ],
      [
        ['gen', join(home.dir, 'g.jsonl'), '--records', '10', '--seed', '1', '--seed', '2'],
        'ledgerstore: --seed is given twice\n',
      ],
      [['counts', home.path, '--index', ''], 'ledgerstore: --index needs a folder, not an empty name\n'],
      [['index', 'build', home.path, '--index='], 'ledgerstore: --index needs a folder, not an empty name\n'],
      [
        ['index', home.path, '--index', join(home.dir, 'index')],
        'ledgerstore: index needs an action first: build, status or rebuild\n',
      ],
      [
        ['index', 'frob', home.path, '--index', join(home.dir, 'index')],
        'ledgerstore: index takes build, status or rebuild, not "frob"\n',
      ],
    ];
    for (const [args, message] of mistakes) {
      const run = await ledgerstore(args);
      assert.is(run.code, 2, args.join(' '));
      assert.is(run.stdout, '', args.join(' '));
      assert.ok(run.stderr.startsWith(message), `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr.slice(message.length), /^usage:/, args.join(' '));
    }
    assert.not.ok(existsSync(join(home.dir, 'g.jsonl')));
    assert.not.ok(existsSync(join(home.dir, 'index')));
    unchanged(home.path, FIXTURE_TEXT);
  });
});

test("--help and help print every command's usage on stdout and exit 0", async () => {
  for (const args of [['--help'], ['help'], ['-h']]) {
    const run = await ledgerstore(args);
    assert.is(run.code, 0, args.join(' '));
    assert.is(run.stderr, '');
    assert.ok(run.stdout.startsWith('usage: ledgerstore <command>'), run.stdout);
    for (const command of NAMES) assert.ok(run.stdout.includes(`  ledgerstore ${command}`), command);
    assert.ok(run.stdout.includes('ledgerstore --version'));
  }
});

test('every command has its own --help (and help <command>): its usage, what it does, its flags', async () => {
  for (const name of NAMES) {
    for (const args of [
      [name, '--help'],
      ['help', name],
      ['-h', name, 'some-ledger'],
    ]) {
      const run = await ledgerstore(args);
      assert.is(run.code, 0, args.join(' '));
      assert.is(run.stderr, '');
      assert.ok(
        run.stdout.startsWith(`usage: ${synopsisOf(name)}\n\n${COMMANDS[name].help.join('\n')}\n`),
        `${args.join(' ')}: ${run.stdout}`,
      );
      assert.not.ok(run.stdout.includes('usage: ledgerstore <command>'), "not every command's usage");
      for (const flag of COMMANDS[name].flags)
        assert.ok(run.stdout.includes(`--${flag}`), `${name} --help speaks of --${flag}`);
    }
  }
  const unknown = await ledgerstore(['help', 'frob']);
  assert.is(unknown.code, 2);
  assert.ok(unknown.stderr.startsWith('ledgerstore: unknown command "frob"\nusage:'), unknown.stderr);
});

test('outbox --help and check --help say that --json writes JSON Lines; the others one value', async () => {
  for (const name of ['outbox', 'check'] as const)
    assert.match((await ledgerstore([name, '--help'])).stdout, /JSON Lines: one JSON object a line/);
  for (const name of ['counts', 'sent-ids', 'conclusion', 'verify', 'index', 'append', 'copy', 'gen'] as const) {
    assert.match((await ledgerstore([name, '--help'])).stdout, /one JSON (object|value)/, name);
  }
});

test('--version prints the version of the package', async () => {
  const { version } = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
  ) as { version: string };
  expectRun(await ledgerstore(['--version']), 0, `ledgerstore ${version}\n`, '');
});

test.run();
