/**
 * `ledgerstore drop`, run as a real process (the real bin where a writer holds the target and for
 * the first command of each kind, else a process that stays up between commands:
 * `cli-host.ts`), on a JSONL file and a `level:` folder: without
 * `--yes` it says what it would remove and changes nothing (exit 2); with it, the ledger is gone;
 * it refuses (exit 1, nothing changed) a target that is not there, one a writer holds, a link,
 * a file that is not a ledger, a folder that holds anything but a LevelDB ledger. (On
 * PostgreSQL: `test/postgres/unfinished-copy.test.ts`.)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ledger } from '../lib/index.js';
import { cli, FIXTURE_TEXT } from './support/cli.js';
import { CliHost } from './support/cli-host.js';
import { withHome } from './support/ledger.js';
import { LineProcess } from './support/line-process.js';

const host = new CliHost();
test.after(() => host.stop());

const HOLDER = fileURLToPath(new URL('./support/hold-level.js', import.meta.url));

test('a JSONL file: drop without --yes changes nothing; with it, the file is gone', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const asked = cli(['drop', home.path]);
    assert.is(asked.code, 2);
    assert.is(
      asked.stderr,
      `ledgerstore: drop would remove the JSONL file ${home.path} (${Buffer.byteLength(FIXTURE_TEXT).toLocaleString('en-US')} bytes); nothing was removed: add --yes to remove it\n`,
    );
    assert.is(asked.stdout, '');
    assert.is(readFileSync(home.path, 'utf8'), FIXTURE_TEXT, 'unchanged');
    const dropped = await host.run(['drop', `jsonl:${home.path}`, '--yes']);
    assert.is(dropped.code, 0, dropped.stderr);
    assert.match(dropped.stdout, /^jsonl:.*: removed the JSONL file .* bytes\)\n$/);
    assert.not.ok(existsSync(home.path), 'removed');
    const again = await host.run(['drop', home.path, '--yes']);
    assert.is(again.code, 1);
    assert.is(again.stderr, `ledgerstore: ${home.path}: no such file; there is no ledger to drop\n`);
  });
});

test('a JSONL file a writer holds, a link to a ledger, a file that is not a ledger: refused, unchanged', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const writer = await Ledger.open(home.path);
    try {
      const held = cli(['drop', home.path, '--yes']);
      assert.is(held.code, 1, held.stderr);
      assert.match(held.stderr, /the ledger is open for writing elsewhere/);
      assert.is(readFileSync(home.path, 'utf8'), FIXTURE_TEXT);
    } finally {
      await writer.close();
    }
    const link = join(home.dir, 'link.jsonl');
    symlinkSync(home.path, link);
    const linked = await host.run(['drop', link, '--yes']);
    assert.is(linked.code, 1, linked.stderr);
    assert.match(linked.stderr, /is a symbolic link/);
    assert.ok(existsSync(link) && readFileSync(home.path, 'utf8') === FIXTURE_TEXT, 'link and file both there');
    const notes = join(home.dir, 'notes.txt');
    writeFileSync(notes, 'not a ledger\n');
    const foreign = await host.run(['drop', notes, '--yes']);
    assert.is(foreign.code, 1, foreign.stderr);
    assert.match(foreign.stderr, /its first line is not a ledger record; drop removes only a ledger/);
    assert.is(readFileSync(notes, 'utf8'), 'not a ledger\n');
  });
});

test('a level: folder: drop without --yes changes nothing; with it, the folder is gone', async () => {
  await withHome(async (home) => {
    const folder = join(home.dir, 'ledger');
    writeFileSync(home.path, FIXTURE_TEXT);
    assert.is((await host.run(['copy', home.path, `level:${folder}`])).code, 0);
    const files = readdirSync(folder).sort();
    const asked = cli(['drop', `level:${folder}`]);
    assert.is(asked.code, 2);
    assert.match(
      asked.stderr,
      /^ledgerstore: drop would remove the LevelDB ledger folder .* files\); nothing was removed/,
    );
    assert.equal(readdirSync(folder).sort(), files, 'unchanged');
    const dropped = await host.run(['drop', `level:${folder}`, '--yes']);
    assert.is(dropped.code, 0, dropped.stderr);
    assert.not.ok(existsSync(folder), 'the folder is gone');
    const again = await host.run(['drop', `level:${folder}`, '--yes']);
    assert.is(again.code, 1);
    assert.is(again.stderr, `ledgerstore: level:${folder}: no such folder; there is no ledger to drop\n`);
  });
});

test('a level: folder held open, one with a file of its own, an empty one: refused, unchanged', async () => {
  await withHome(async (home) => {
    const folder = join(home.dir, 'ledger');
    writeFileSync(home.path, FIXTURE_TEXT);
    assert.is((await host.run(['copy', home.path, `level:${folder}`])).code, 0);
    // another process holds it: LevelDB's lock
    const holder = new LineProcess([HOLDER, 'hold', folder], 'holder');
    try {
      await holder.waitFor((lines) => lines.some((line) => line.startsWith('ready')), 'it to hold the folder');
      const files = readdirSync(folder).sort(); // as its open left them
      const held = cli(['drop', `level:${folder}`, '--yes']);
      assert.is(held.code, 1, held.stderr);
      assert.match(held.stderr, /open elsewhere/);
      assert.equal(readdirSync(folder).sort(), files);
    } finally {
      holder.process.kill('SIGTERM');
      await holder.exited;
    }
    const files = readdirSync(folder).sort();
    writeFileSync(join(folder, 'notes.txt'), 'mine\n');
    const foreign = await host.run(['drop', `level:${folder}`, '--yes']);
    assert.is(foreign.code, 1, foreign.stderr);
    assert.match(foreign.stderr, /files that are not a LevelDB database's \(notes\.txt\)/);
    assert.equal(readdirSync(folder).sort(), [...files, 'notes.txt'].sort(), 'nothing removed');
    const empty = join(home.dir, 'empty');
    mkdirSync(empty);
    const none = await host.run(['drop', `level:${empty}`, '--yes']);
    assert.is(none.code, 1);
    assert.match(none.stderr, /no ledger in the folder; there is no ledger to drop/);
    assert.ok(existsSync(empty));
  });
});

test('drop needs its target, and takes no other flag', async () => {
  assert.is((await host.run(['drop'])).code, 2);
  assert.is((await host.run(['drop', 'x.jsonl', '--json'])).code, 2);
  const memory = await host.run(['drop', 'memory:', '--yes']);
  assert.is(memory.code, 1);
  assert.match(memory.stderr, /lives only in its process/);
});

test.run();
