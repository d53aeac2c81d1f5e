/**
 * Exit codes that mean what the help says: a read-only command on a ledger that is not there (a
 * typo'd path, a path whose folder is not there, a `level:` folder without a ledger) exits 1
 * with one line of why, and makes nothing; an empty file is an empty ledger (exit 0); `follow`
 * waits only for a file whose folder is there. Real processes: the real bin for the first command
 * of each kind, a process that stays up between commands for the others (`cli-host.ts`).
 * (PostgreSQL: `postgres/cli-missing.test.ts`.)
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CLI, cli, EMPTY_COUNTS, type Run } from './support/cli.js';
import { CliHost } from './support/cli-host.js';
import { withHome } from './support/ledger.js';
import { LineProcess } from './support/line-process.js';

const host = new CliHost();
test.after(() => host.stop());

/** The real bin for the first command, the host for the others. */
const runner = (): ((args: readonly string[]) => Promise<Run>) => {
  let first = true;
  return async (args) => {
    if (!first) return host.run(args);
    first = false;
    return cli(args);
  };
};

/** Every command that reads a ledger and changes nothing, on `target`, and the verb its refusal says. */
const READ_ONLY = (target: string, index: string): [readonly string[], string][] => [
  [['counts', target], 'read'],
  [['outbox', target], 'read'],
  [['sent-ids', target, '{"type":"turn","session":"a","turn":1}'], 'read'],
  [['conclusion', target, 'trusted', 'x'], 'read'],
  [['export', target], 'read'],
  [['verify', target], 'verify'],
  [['check', '--ledger', target], 'check against'],
  [['index', 'status', target, '--index', index], 'compare the index with'],
  [['index', 'build', target, '--index', index], 'index'],
  [['follow', target, '--index', index], 'follow'],
];

test('every read-only command on a typo of a path exits 1 with one line, and makes nothing', async () => {
  await withHome(async (home) => {
    const typo = join(home.dir, 'honcho.jsnol');
    const run1 = runner();
    for (const [args, verb] of READ_ONLY(typo, join(home.dir, 'idx'))) {
      const run = await run1(args);
      assert.equal(
        run,
        { code: 1, stdout: '', stderr: `ledgerstore: ${typo}: no such file; there is no ledger to ${verb}\n` },
        args.join(' '),
      );
    }
    assert.equal(readdirSync(home.dir), [], 'nothing made');
  });
});

test('a path whose folder is not there, a level: folder missing or without a ledger: exit 1, and follow does not wait', async () => {
  await withHome(async (home) => {
    mkdirSync(join(home.dir, 'empty'));
    const nofolder = join(home.dir, 'nodir', 'honcho.jsonl');
    const cases: [string, string][] = [
      [nofolder, `no such file, nor its folder ${join(home.dir, 'nodir')}`],
      [`jsonl:${nofolder}`, `no such file, nor its folder ${join(home.dir, 'nodir')}`],
      [`level:${join(home.dir, 'nolv')}`, 'no such folder'],
      [`level:${join(home.dir, 'empty')}`, 'no ledger in the folder'],
    ];
    for (const [target, why] of cases) {
      const run1 = runner();
      for (const [args, verb] of [
        [['counts', target], 'read'],
        [['export', target], 'read'],
        [['follow', target], 'follow'],
      ] as const) {
        const run = await run1(args);
        assert.equal(
          run,
          { code: 1, stdout: '', stderr: `ledgerstore: ${target}: ${why}; there is no ledger to ${verb}\n` },
          args.join(' '),
        );
      }
    }
    assert.equal(readdirSync(home.dir), ['empty']);
    assert.equal(readdirSync(join(home.dir, 'empty')), []);
  });
});

test('an empty file is an empty ledger: exit 0', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, '');
    assert.equal(cli(['counts', home.path, '--json']), { code: 0, stdout: EMPTY_COUNTS, stderr: '' });
    assert.equal(await host.run(['export', home.path]), { code: 0, stdout: '', stderr: '' });
    assert.is((await host.run(['verify', home.path])).code, 0);
  });
});

test('follow of a file not made yet, in a folder that is there, waits for it and says so', async () => {
  await withHome(async (home) => {
    const follow = new LineProcess([CLI, 'follow', home.path], 'follower');
    try {
      await follow.waitFor(() => follow.stderr !== '', 'the follower to say what it does');
    } finally {
      follow.process.kill('SIGTERM');
      await follow.exited;
    }
    assert.is(
      follow.stderr,
      `ledgerstore: following ${home.path} from record 0: no such file yet; waiting for it to be made (Ctrl-C stops)\n`,
    );
    assert.is(follow.ended?.code, 143);
    assert.equal(readdirSync(home.dir), [], 'the follower made nothing');
  });
});

test('the help says what a ledger that is not there gives', async () => {
  assert.match(
    (await host.run(['--help'])).stdout,
    /1 the ledger refused a record, or is damaged, unreadable or not there/,
  );
  const follow = (await host.run(['follow', '--help'])).stdout.replace(/\n/g, ' ');
  assert.match(
    follow,
    /A JSONL file that is not there yet, in a folder that is, .* once made, and stderr says it waits/,
  );
  assert.match(follow, /any other ledger that is not there .* is exit 1/);
});

test.run();
