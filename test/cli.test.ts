/**
 * The `ledgerstore` bin end to end, as a separate process the way an operator runs it: what only
 * a real process shows (exit statuses through the bin, a reader that goes away, real signals, a
 * real terminal). Everything else about the commands runs in process (`test/cli-*.test.ts`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecord } from '../lib/index.js';
import {
  CLI,
  cli,
  expectRun,
  FIXTURE,
  FIXTURE_COUNTS,
  FIXTURE_TEXT,
  lineOf,
  manyWaiting,
  RUNBOOK,
  unchanged,
  withFixture,
} from './support/cli.js';
import { decided, sent, turn, withHome } from './support/ledger.js';

test('the bin exits 0, 1 and 2, with the words on stdout and stderr', async () => {
  const damaged = FIXTURE.slice(0, 3).map(lineOf).join('') + lineOf(sent(turn('chat-9', 1)));
  await withFixture((home) => {
    expectRun(cli(['counts', home.path, '--json']), 0, FIXTURE_COUNTS, '');
    writeFileSync(home.path, damaged);
    expectRun(
      cli(['counts', home.path]),
      1,
      '',
      `ledgerstore: ${home.path}:4: turn 1 of session chat-9: not waiting to be sent; ${RUNBOOK}\n`,
    );
    const usage = cli(['counts']);
    assert.is(usage.code, 2);
    assert.ok(usage.stderr.startsWith('ledgerstore: counts needs <ledger>\nusage: ledgerstore counts'), usage.stderr);
  });
});

test('append through the bin reads its stdin', async () => {
  await withHome((home) => {
    expectRun(cli(['append', home.path], FIXTURE_TEXT), 0, '', `appended 10 records to ${home.path}\n`);
    assert.is(readFileSync(home.path, 'utf8'), FIXTURE_TEXT);
  });
});

test('outbox: a reader that stops reading (| head) ends it quietly with 0', async () => {
  await withHome(async (home) => {
    manyWaiting(home.path, 20_000); // about 2.3 MB of output: far more than a pipe holds
    const child = spawn(process.execPath, [CLI, 'outbox', home.path, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let first = '';
    child.stdout.setEncoding('utf8').once('data', (chunk: string) => {
      first = chunk;
      child.stdout.destroy();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.ok(first.startsWith('{"item":{"type":"turn","session":"chat-0","turn":0},'), first.slice(0, 80));
    assert.is(stderr, '');
    assert.is(code, 0);
  });
});

/**
 * Starts `ledgerstore args...`, which builds `target` aside, sends `signal` once the file it
 * builds beside `target` holds something, and gives how the command ended.
 */
async function stoppedWhileWriting(
  args: readonly string[],
  target: string,
  signal: 'SIGINT' | 'SIGTERM',
): Promise<{ code: number | null; stderr: string; temp: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
  const temp = `${target}.tmp-${String(child.pid)}`;
  // a guard against a command that never starts writing, not a measure: generous for a loaded machine
  const deadline = Date.now() + 60_000;
  while ((statSync(temp, { throwIfNoEntry: false })?.size ?? 0) === 0) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await ended;
      assert.unreachable(`no ${temp} after 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  child.kill(signal);
  return { code: await ended, stderr, temp };
}

/** A word for `sh`, quoted. */
const shQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

test('copy: SIGINT from outside, while it writes, leaves nothing at the target or beside it and exits 130', async () => {
  await withHome(async (home) => {
    assert.is(cli(['gen', home.path, '--records', '400000', '--seed', '2']).code, 0);
    const target = join(home.dir, 'copy.jsonl');
    const stopped = await stoppedWhileWriting(['copy', home.path, target], target, 'SIGINT');
    assert.is(stopped.code, 130, stopped.stderr);
    assert.is(
      stopped.stderr,
      `ledgerstore: copy stopped by SIGINT; ${target} was not written (what the copy had built beside it is removed)\n`,
    );
    assert.not.ok(existsSync(stopped.temp), `${stopped.temp} is left`);
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('copy and gen cut short by a write error (a file size limit: EFBIG) say the target was not written', async () => {
  await withHome((home) => {
    assert.is(cli(['gen', home.path, '--records', '20000', '--seed', '2']).code, 0);
    // ulimit -f is in 512-byte blocks; the ledger is some 3 MB. SIGXFSZ ignored: a write past the
    // limit fails with EFBIG instead of killing the process.
    const limited = (args: readonly string[]): { status: number | null; stderr: string } =>
      spawnSync(
        'sh',
        ['-c', `trap '' XFSZ; ulimit -f 1024; exec ${[process.execPath, CLI, ...args].map(shQuote).join(' ')}`],
        { encoding: 'utf8' },
      );
    const target = join(home.dir, 'copy.jsonl');
    const copied = limited(['copy', home.path, target]);
    assert.is(copied.status, 1);
    assert.match(
      copied.stderr,
      /^ledgerstore: .*copy\.jsonl\.tmp-\d+: file too large \(EFBIG\); see docs\/runbook\.md#ledger-unwritable\n/,
    );
    assert.ok(
      copied.stderr.endsWith(
        `ledgerstore: copy stopped; ${target} was not written (what the copy had built beside it is removed)\n`,
      ),
      copied.stderr,
    );
    const generated = join(home.dir, 'gen.jsonl');
    const gen = limited(['gen', generated, '--records', '20000']);
    assert.is(gen.status, 1);
    assert.match(gen.stderr, /file too large \(EFBIG\)/);
    assert.ok(gen.stderr.endsWith(`ledgerstore: ${generated}: gen stopped; nothing was written\n`), gen.stderr);
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('gen: Ctrl-C (SIGINT) or SIGTERM removes the temporary file and exits 130 or 143', async () => {
  await withHome(async (home) => {
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      // 3 million records is some 500 MB: if the signal is not handled, it is seen, not waited out.
      const stopped = await stoppedWhileWriting(['gen', home.path, '--records', '3000000'], home.path, signal);
      assert.is(stopped.code, code, signal);
      assert.is(stopped.stderr, `ledgerstore: ${home.path}: gen stopped by ${signal}; nothing was written\n`, signal);
      assert.not.ok(existsSync(stopped.temp), `${signal}: ${stopped.temp} is left`);
      assert.equal(readdirSync(home.dir), [], signal);
    }
  });
});

test('export takes its progress line off the terminal when it ends', async () => {
  // util-linux's script(1) runs the command with a terminal for its stderr (Debian's bsdutils,
  // an essential package: on every Debian or Ubuntu machine and Node.js image)
  assert.is(
    spawnSync('script', ['--version'], { encoding: 'utf8' }).status,
    0,
    'this test needs script(1), from util-linux',
  );
  await withHome((home) => {
    // Big enough that export writes many chunks over more than the progress's 100 ms.
    assert.is(cli(['gen', home.path, '--records', '50000', '--seed', '1']).code, 0);
    const exported = join(home.dir, 'exported.jsonl');
    const command = `${shQuote(process.execPath)} ${shQuote(CLI)} export ${shQuote(home.path)} > ${shQuote(exported)}`;
    // `script` gives the command a terminal and copies what it shows (here only stderr) to stdout.
    const run = spawnSync('script', ['-qec', command, '/dev/null'], {
      encoding: 'utf8',
      env: { ...process.env, SHELL: '/bin/sh' },
    });
    assert.is(run.status, 0, run.stderr);
    assert.ok(readFileSync(exported).equals(readFileSync(home.path)), 'export wrote the ledger');
    const screen = run.stdout;
    assert.ok(screen.includes('exporting '), JSON.stringify(screen));
    assert.ok(screen.endsWith('\r\x1b[K'), `left on screen: ${JSON.stringify(screen.slice(-80))}`);
  });
});

test('--index on a read-only file system says so (EROFS), not that something is missing', async () => {
  // A read-only mount in a mount namespace of its own (util-linux's unshare; --map-root-user
  // gives the right to mount to a user who is not root, where the kernel allows user namespaces)
  await withFixture((home) => {
    const mount = join(home.dir, 'ro');
    mkdirSync(mount);
    const index = join(mount, 'index');
    const script = `mount -t tmpfs -o ro tmpfs ${shQuote(mount)} && exec ${[process.execPath, CLI, 'counts', home.path, '--index', index].map(shQuote).join(' ')}`;
    const run = spawnSync('unshare', ['--mount', '--map-root-user', 'sh', '-c', script], { encoding: 'utf8' });
    assert.is(run.error, undefined, 'this test needs unshare(1), from util-linux');
    assert.is(
      run.stderr,
      `ledgerstore: ${index}: read-only file system (EROFS); see docs/runbook.md#ledger-unwritable\n`,
    );
    assert.is(run.status, 1);
  });
});

test("the runbook's fix step for a damaged line runs as written, and check --ledger answers it", async () => {
  const runbook = readFileSync(fileURLToPath(new URL('../../docs/runbook.md', import.meta.url)), 'utf8');
  const step = runbook.slice(runbook.indexOf('## honcho-ledger-damaged'), runbook.indexOf('## ledger-unwritable'));
  const block = /```sh\n([\s\S]*?)```/.exec(step)?.[1];
  assert.ok(block?.includes('ledgerstore check --ledger') === true, 'the step has its sh block');
  // Line 4 decides an item a second time; its fix decides another item, which a later line sends.
  const lines = FIXTURE.slice(0, 3).map(lineOf);
  const damaged = [
    ...lines,
    lineOf(decided(turn('chat-1', 3))),
    lineOf(sent(turn('chat-8', 1))),
    FIXTURE.slice(3).map(lineOf).join(''),
  ].join('');
  await withHome((home) => {
    writeFileSync(home.path, damaged);
    const corrected = encodeRecord(decided(turn('chat-8', 1)));
    const script = `ledgerstore() { ${shQuote(process.execPath)} ${shQuote(CLI)} "$@"; }\nf=${shQuote(home.path)}\nn=4\n${block.replace("'<corrected line>'", shQuote(corrected))}`;
    const run = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    assert.is(run.stderr, `checked ${1 + 1 + FIXTURE.length - 3} lines: ${1 + 1 + FIXTURE.length - 3} ok, 0 refused\n`);
    assert.is(run.status, 0);
    // the corrected line, then every line after the damaged one: all taken
    const verdicts = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(' ', 2).join(' '));
    assert.equal(
      verdicts,
      Array.from({ length: 1 + 1 + FIXTURE.length - 3 }, (_, k) => `stdin:${k + 1}: ok`),
    );
    unchanged(home.path, damaged);
  });
});

test('the bin starts with its shebang', () => {
  assert.ok(readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n'));
});

test.run();
