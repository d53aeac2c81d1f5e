/**
 * The command line's usage: mistakes exit 2 with the usage on stderr and change nothing; help
 * goes to stdout. Run in process.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FIXTURE_TEXT, ledgerstore, unchanged, withFixture } from './support/cli.js';

test('a ledger that names no ledger is a usage error', async () => {
  for (const target of ['level:', 'memory:x', 'jsonl:']) {
    const run = await ledgerstore(['counts', target]);
    assert.is(run.code, 2, target);
    assert.match(run.stderr, /a ledger is a path, jsonl:<path>, level:<folder> or memory:/);
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
      [['verify', home.path, '--json'], 'ledgerstore: verify takes no --json\n'],
      [['sent-ids', home.path], 'ledgerstore: sent-ids needs <item-as-json>\n'],
      [['conclusion', home.path, 'trusted'], 'ledgerstore: conclusion needs <text>\n'],
      [['check', home.path], `ledgerstore: check takes no argument ${JSON.stringify(home.path)}\n`],
      [['gen', join(home.dir, 'g.jsonl')], 'ledgerstore: gen needs --records N\n'],
      [['gen', join(home.dir, 'g.jsonl'), '--records'], 'ledgerstore: --records needs a value\n'],
      [['gen', join(home.dir, 'g.jsonl'), '--records', 'ten'], `ledgerstore: --records must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not "ten"\n`],
      [['gen', join(home.dir, 'g.jsonl'), '--records', '1.5'], `ledgerstore: --records must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, not "1.5"\n`],
      [['gen', join(home.dir, 'g.jsonl'), '--records', '10', '--seed', '1', '--seed', '2'], 'ledgerstore: --seed is given twice\n'],
      [['counts', home.path, '--index', ''], 'ledgerstore: --index needs a folder, not an empty name\n'],
      [['index', 'build', home.path, '--index='], 'ledgerstore: --index needs a folder, not an empty name\n'],
      [['index', home.path, '--index', join(home.dir, 'index')], 'ledgerstore: index needs an action first: build, status or rebuild\n'],
      [['index', 'frob', home.path, '--index', join(home.dir, 'index')], 'ledgerstore: index takes build, status or rebuild, not "frob"\n'],
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

test('--help and help print the usage on stdout and exit 0', async () => {
  for (const args of [['--help'], ['help'], ['-h'], ['counts', '--help']]) {
    const run = await ledgerstore(args);
    assert.is(run.code, 0, args.join(' '));
    assert.is(run.stderr, '');
    assert.ok(run.stdout.startsWith('usage: ledgerstore <command>'), run.stdout);
    for (const command of ['verify', 'counts', 'outbox', 'sent-ids', 'conclusion', 'append', 'check', 'gen']) {
      assert.ok(run.stdout.includes(`ledgerstore ${command}`), command);
    }
  }
});

test.run();
