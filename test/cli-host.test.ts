/**
 * The CLI's host process for tests (`support/cli-host.ts`): a command gets what the real bin
 * would write and exit with; a stuck one fails within its deadline and gets the process killed,
 * and the next command runs in a fresh one.
 */
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli } from './support/cli.js';
import { CliHost } from './support/cli-host.js';
import { withHome } from './support/ledger.js';

test('a command in the host writes and exits as the real bin does', async () => {
  const host = new CliHost();
  try {
    await withHome(async (home) => {
      const typo = join(home.dir, 'honcho.jsnol');
      for (const args of [['counts', typo], ['cunts', typo], ['counts', home.path, '--json'], ['--version']])
        assert.equal(await host.run(args), cli(args), args.join(' '));
    });
  } finally {
    host.stop();
  }
});

test('a stuck command fails within its deadline, and the next runs in a new process', async () => {
  const host = new CliHost(3000);
  try {
    await withHome(async (home) => {
      // follow of a file not made yet, in a folder that is there, waits for it
      const stuck = await host.run(['follow', home.path]).then(
        () => null,
        (e: unknown) => e,
      );
      assert.instance(stuck, Error);
      assert.match((stuck as Error).message, /^stuck for 3 s: ledgerstore follow /);
      const after = await host.run(['counts', join(home.dir, 'none.jsonl')]);
      assert.is(after.code, 1);
      assert.match(after.stderr, /no such file/);
    });
  } finally {
    host.stop();
  }
});

test.run();
