/**
 * The command line's read model (`--index <folder>`, `index build|status|rebuild`), run in
 * process, with a real holder process where a lock is the point.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SCHEMA } from '../lib/projections/layout.js';
import {
  expectRun,
  FIXTURE_COUNTS,
  FIXTURE_OUTBOX,
  FIXTURE_TEXT,
  ledgerstore,
  lineOf,
  literal,
  unchanged,
  withFixture,
} from './support/cli.js';
import { sent, turn, withHome } from './support/ledger.js';

test('--index keeps a read model: queries answer from it, index status says where it stands', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const index = join(home.dir, 'index');
    expectRun(
      await ledgerstore(['counts', home.path, '--json', '--index', index]),
      0,
      FIXTURE_COUNTS,
      `ledgerstore: ${index}: built the index of ${home.path} (10 records)\n`,
    );
    expectRun(
      await ledgerstore(['outbox', home.path, '--json', '--index', index]),
      0,
      FIXTURE_OUTBOX.map((l) => `${l}\n`).join(''),
      '',
    );
    expectRun(
      await ledgerstore([
        'sent-ids',
        home.path,
        '{"type":"turn","session":"chat-1","turn":3}',
        '--json',
        '--index',
        index,
      ]),
      0,
      '["msg-a1","msg-a2"]\n',
      '',
    );
    const appended = await ledgerstore(['append', home.path, '--index', index], {
      input: lineOf(sent(turn('chat-1', 5), ['m-5'])),
    });
    assert.is(appended.code, 0, appended.stderr);
    expectRun(
      await ledgerstore(['index', 'status', home.path, '--index', index]),
      0,
      [
        `index:      ${index}`,
        `schema:     ${SCHEMA} (this ledgerstore: ${SCHEMA})`,
        `checkpoint: record 11 of ${home.path}`,
        'log:        up to date',
        'counts:     7 decided (sent 3, waiting 2, failed 1, skipped 1)',
        'projections: items 2 ready, outbox 1 ready, counts 1 ready, stacks 1 ready',
        '',
      ].join('\n'),
      '',
    );
    writeFileSync(home.path, `${readFileSync(home.path, 'utf8')}${lineOf(sent(turn('chat-2', 2), ['m-6']))}`);
    assert.match(
      (await ledgerstore(['index', 'status', home.path, '--index', index])).stdout,
      /log: {8}1 record behind \(caught up at the next open\)/,
    );
    const verified = await ledgerstore(['verify', home.path, '--index', index]);
    assert.is(verified.code, 0, verified.stderr);
    assert.match(
      verified.stdout,
      new RegExp(`\n${literal(index)}: ok, the index answers every query as a fresh replay does\n$`),
    );
    const rebuilt = await ledgerstore(['index', 'rebuild', home.path, '--index', index]);
    assert.is(rebuilt.code, 0, rebuilt.stderr);
    assert.match(
      rebuilt.stdout,
      new RegExp(`^${literal(index)}: up to date with ${literal(home.path)} at record 12, in [0-9.]+ s\n$`),
    );
    expectRun(
      await ledgerstore(['index', 'frobnicate', home.path, '--index', index]),
      2,
      '',
      'ledgerstore: index takes build, status or rebuild, not "frobnicate"\nusage: ledgerstore index build|status|rebuild <ledger> --index <folder> [--json]\n(ledgerstore index --help says more)\n',
    );
    assert.is((await ledgerstore(['index', 'build', home.path])).code, 2);
  });
});

test('index: a ledger argument that names no ledger is refused before the index is touched', async () => {
  await withFixture(async (home) => {
    const index = join(home.dir, 'index');
    assert.is((await ledgerstore(['index', 'build', home.path, '--index', index])).code, 0);
    const before = await ledgerstore(['index', 'status', home.path, '--index', index]);
    assert.match(before.stdout, /checkpoint: record 10 of /);
    for (const action of ['rebuild', 'build', 'status']) {
      const run = await ledgerstore(['index', action, 'memory:x', '--index', index]);
      assert.is(run.code, 2, action);
      assert.is(run.stdout, '', action);
      assert.match(run.stderr, /memory: takes nothing after the colon/, action);
    }
    expectRun(await ledgerstore(['index', 'status', home.path, '--index', index]), 0, before.stdout, '');
    const fresh = join(home.dir, 'fresh');
    assert.is((await ledgerstore(['index', 'rebuild', 'level:', '--index', fresh])).code, 2);
    assert.not.ok(existsSync(fresh), 'a refused command creates no index');
  });
});

test('index status of a folder with no index says so and creates nothing', async () => {
  await withFixture(async (home) => {
    const missing = join(home.dir, 'nosuch');
    expectRun(
      await ledgerstore(['index', 'status', home.path, '--index', missing]),
      0,
      `index:      ${missing}\ncheckpoint: none: there is no index at ${missing} (no such folder); the next open with --index ${missing} builds it\n`,
      '',
    );
    assert.not.ok(existsSync(missing), 'no folder made');
    const empty = join(home.dir, 'empty');
    mkdirSync(empty);
    expectRun(
      await ledgerstore(['index', 'status', home.path, '--index', empty]),
      0,
      `index:      ${empty}\ncheckpoint: none: there is no index at ${empty} (no read model in the folder); the next open with --index ${empty} builds it\n`,
      '',
    );
    assert.equal(readdirSync(empty), [], 'no database made');
  });
});

test('--index naming a file, not a folder, says so and leaves the file as it was', async () => {
  await withFixture(async (home) => {
    const file = join(home.dir, 'e.jsonl');
    writeFileSync(file, 'keep me\n');
    const notFolder = `ledgerstore: ${file}: not a directory (ENOTDIR); see docs/runbook.md#ledger-unwritable\n`;
    expectRun(await ledgerstore(['counts', home.path, '--index', file]), 1, '', notFolder);
    expectRun(await ledgerstore(['index', 'build', home.path, '--index', file]), 1, '', notFolder);
    expectRun(await ledgerstore(['index', 'status', home.path, '--index', file]), 1, '', notFolder);
    unchanged(file, 'keep me\n');
  });
});

const HOLDER = fileURLToPath(new URL('./support/hold-ledger.js', import.meta.url));

/** Runs `body` while another process holds `target` open for writing (with the read model in `index`). */
async function whileHeld(args: readonly string[], body: () => Promise<void>): Promise<void> {
  const child = spawn(process.execPath, [HOLDER, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const said = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (data: Buffer) => resolve(data.toString()));
      child.once('exit', (code) => reject(new Error(`the holder exited with ${String(code)}`)));
    });
    assert.match(said, /^ready \d+\n$/);
    await body();
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

test('a LevelDB ledger or index held elsewhere: the refusal says readers are kept out too', async () => {
  await withFixture(async (home) => {
    const folder = join(home.dir, 'ledger.level');
    assert.is((await ledgerstore(['copy', home.path, `level:${folder}`])).code, 0);
    await whileHeld([`level:${folder}`], async () => {
      expectRun(
        await ledgerstore(['counts', `level:${folder}`]),
        1,
        '',
        `ledgerstore: ${folder}: the LevelDB ledger is open elsewhere (another process, or another open in this one); LevelDB allows one open at a time, even to read; see docs/runbook.md#ledger-locked\n`,
      );
    });
    const index = join(home.dir, 'index');
    await whileHeld([home.path, index], async () => {
      expectRun(
        await ledgerstore(['counts', home.path, '--index', index]),
        1,
        '',
        `ledgerstore: ${index}: the index is open elsewhere (another process, or another open in this one); LevelDB allows one open at a time, even to read; see docs/runbook.md#ledger-locked\n`,
      );
      // What the runbook offers instead: the JSONL ledger read beside its writer, without --index.
      expectRun(await ledgerstore(['counts', home.path, '--json']), 0, FIXTURE_COUNTS, '');
    });
    const runbook = readFileSync(fileURLToPath(new URL('../../docs/runbook.md', import.meta.url)), 'utf8');
    assert.ok(runbook.includes('## ledger-locked\n'), 'the anchor is there');
    assert.ok(runbook.includes('even to read'), 'the runbook says readers are kept out of LevelDB');
  });
});

test('verify --index of an index that answers otherwise suggests the rebuild as a command that pastes, quoted', async () => {
  await withHome(async (home) => {
    const ledger = join(home.dir, "it's a ledger.jsonl");
    const index = join(home.dir, 'the index');
    writeFileSync(ledger, FIXTURE_TEXT);
    assert.is((await ledgerstore(['index', 'build', ledger, '--index', index])).code, 0);
    // An edit by hand of an earlier line, of the same length: the checkpoint's last line is as it
    // was, so the read model trusts what it holds, and only a fresh replay sees the change.
    writeFileSync(ledger, FIXTURE_TEXT.replace('"nothing to send"', '"nothing to sEnd"'));
    const run = await ledgerstore(['verify', ledger, '--index', index]);
    assert.is(run.code, 1);
    const suggested = /rebuild it \((.*)\)\n$/.exec(run.stderr)?.[1];
    assert.ok(suggested !== undefined, run.stderr);
    assert.ok(
      run.stderr.startsWith(
        `ledgerstore: ${index}: the index does not answer as a fresh replay of ${ledger}: the decisions differ; `,
      ),
      run.stderr,
    );
    // what a shell makes of the suggestion: the words the CLI takes
    const words = spawnSync('sh', ['-c', `printf '%s\\n' ${suggested}`], { encoding: 'utf8' }).stdout;
    assert.is(words, ['ledgerstore', 'index', 'rebuild', ledger, '--index', index, ''].join('\n'));
    assert.is((await ledgerstore(['index', 'rebuild', ledger, '--index', index])).code, 0);
    const verified = await ledgerstore(['verify', ledger, '--index', index]);
    assert.is(verified.code, 0, verified.stderr);
  });
});

test('index status --json and verify --index --json: one object each', async () => {
  await withFixture(async (home) => {
    const index = join(home.dir, 'index');
    const none = await ledgerstore(['index', 'status', home.path, '--index', index, '--json']);
    assert.equal(JSON.parse(none.stdout), {
      index,
      exists: false,
      why: 'no such folder',
      schema: null,
      ledgerstoreSchema: SCHEMA,
      checkpoint: null,
      building: false,
      behind: null,
      rebuildsAtNextOpen: true,
      counts: null,
      projections: [],
      openIn: null,
    });
    assert.is((await ledgerstore(['index', 'build', home.path, '--index', index])).code, 0);
    writeFileSync(home.path, `${FIXTURE_TEXT}${lineOf(sent(turn('chat-1', 5), ['m-5']))}`);
    const behind = await ledgerstore(['index', 'status', home.path, '--index', index, '--json']);
    assert.is(behind.code, 0, behind.stderr);
    assert.equal(JSON.parse(behind.stdout), {
      index,
      exists: true,
      schema: SCHEMA,
      ledgerstoreSchema: SCHEMA,
      checkpoint: { position: 10, log: home.path },
      building: false,
      behind: 1,
      rebuildsAtNextOpen: false,
      counts: JSON.parse(FIXTURE_COUNTS) as unknown,
      projections: ['items', 'outbox', 'counts', 'stacks'].map((name) => ({
        name,
        version: name === 'items' ? 2 : 1,
        state: 'ready',
        why: null,
      })),
      openIn: null,
    });
    const verified = await ledgerstore(['verify', home.path, '--index', index, '--json']);
    assert.is(verified.code, 0, verified.stderr);
    assert.equal((JSON.parse(verified.stdout) as { index: unknown }).index, { folder: index, ok: true });
    writeFileSync(
      home.path,
      `${FIXTURE_TEXT.replace('"nothing to send"', '"nothing to sEnd"')}${lineOf(sent(turn('chat-1', 5), ['m-5']))}`,
    );
    const differs = await ledgerstore(['verify', home.path, '--index', index, '--json']);
    assert.is(differs.code, 1);
    const said = JSON.parse(differs.stdout) as { ok: boolean; index: unknown };
    assert.is(said.ok, false);
    assert.equal(said.index, { folder: index, ok: false, differ: ['decisions'] });
  });
});

test.run();
