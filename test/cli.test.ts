/**
 * The `ledgerstore` bin end to end, as a separate process the way an operator runs it: what only
 * a real process shows (exit statuses through the bin, a reader that goes away, real signals, a
 * real terminal). Everything else about the commands runs in process (`test/cli-*.test.ts`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CLI, FIXTURE, FIXTURE_COUNTS, FIXTURE_TEXT, RUNBOOK, cli, expectRun, lineOf, manyWaiting, withFixture } from './support/cli.js';
import { sent, turn, withHome } from './support/ledger.js';

test('the bin exits 0, 1 and 2, with the words on stdout and stderr', async () => {
  const damaged = FIXTURE.slice(0, 3).map(lineOf).join('') + lineOf(sent(turn('chat-9', 1)));
  await withFixture((home) => {
    expectRun(cli(['counts', home.path, '--json']), 0, FIXTURE_COUNTS, '');
    writeFileSync(home.path, damaged);
    expectRun(cli(['counts', home.path]), 1, '', `ledgerstore: ${home.path}:4: turn 1 of session chat-9: not waiting to be sent; ${RUNBOOK}\n`);
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
 * Starts `gen` of a ledger far too big to finish, sends `signal` once its temporary file holds
 * something, and gives how the command ended.
 */
async function genStoppedBy(file: string, signal: 'SIGINT' | 'SIGTERM'): Promise<{ code: number | null; stderr: string; temp: string }> {
  // 3 million records is some 500 MB: if the signal is not handled, it is seen, not waited out.
  const child = spawn(process.execPath, [CLI, 'gen', file, '--records', '3000000'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const ended = new Promise<number | null>((resolve) => child.on('close', resolve));
  const temp = `${file}.tmp-${String(child.pid)}`;
  // a guard against a gen that never starts writing, not a measure: generous for a loaded machine
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

test('gen: Ctrl-C (SIGINT) or SIGTERM removes the temporary file and exits 130 or 143', async () => {
  await withHome(async (home) => {
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      const stopped = await genStoppedBy(home.path, signal);
      assert.is(stopped.code, code, signal);
      assert.is(stopped.stderr, `ledgerstore: ${home.path}: gen stopped by ${signal}; nothing was written\n`, signal);
      assert.not.ok(existsSync(stopped.temp), `${signal}: ${stopped.temp} is left`);
      assert.equal(readdirSync(home.dir), [], signal);
    }
  });
});

/** A word for `sh`, quoted. */
const shQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

test('export takes its progress line off the terminal when it ends', async () => {
  // util-linux's script(1) runs the command with a terminal for its stderr (Debian's bsdutils,
  // an essential package: on every Debian or Ubuntu machine and Node.js image)
  assert.is(spawnSync('script', ['--version'], { encoding: 'utf8' }).status, 0, 'this test needs script(1), from util-linux');
  await withHome((home) => {
    // Big enough that export writes many chunks over more than the progress's 100 ms.
    assert.is(cli(['gen', home.path, '--records', '50000', '--seed', '1']).code, 0);
    const exported = join(home.dir, 'exported.jsonl');
    const command = `${shQuote(process.execPath)} ${shQuote(CLI)} export ${shQuote(home.path)} > ${shQuote(exported)}`;
    // `script` gives the command a terminal and copies what it shows (here only stderr) to stdout.
    const run = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: { ...process.env, SHELL: '/bin/sh' } });
    assert.is(run.status, 0, run.stderr);
    assert.ok(readFileSync(exported).equals(readFileSync(home.path)), 'export wrote the ledger');
    const screen = run.stdout;
    assert.ok(screen.includes('exporting '), JSON.stringify(screen));
    assert.ok(screen.endsWith('\r\x1b[K'), `left on screen: ${JSON.stringify(screen.slice(-80))}`);
  });
});

test('the bin starts with its shebang', () => {
  assert.ok(readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n'));
});

test.run();
