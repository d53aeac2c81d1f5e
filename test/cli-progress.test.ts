/**
 * The progress line of long commands, on a stderr that looks like a terminal, with a clock the
 * test moves (never by timing): each phase is shown with done / total, percent, rate and time
 * left, none is silent, and the line is taken off at the end.
 */
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Progress, timeLeft } from '../lib/cli/progress.js';
import { syntheticLines } from '../lib/honcho/synthetic.js';
import { ledgerstore, steppingClock } from './support/cli.js';
import { withHome } from './support/ledger.js';

/** A stream that keeps what is written to it, as a string. */
function screen(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return { stream, text: () => text };
}

/** Whether the progress line was taken off: after the last `\r\x1b[K` come only whole lines of text, if anything. */
function takenOff(stderr: string): boolean {
  const rest = stderr.slice(stderr.lastIndexOf('\r\x1b[K') + 4);
  return stderr.includes('\r\x1b[K') && (rest === '' || rest.endsWith('\n'));
}

/** The lines a progress output drew, in order (each drawn after `\r\x1b[K`). */
function frames(stderr: string): string[] {
  return stderr.split('\r\x1b[K').filter((frame) => frame !== '');
}

test('a phase with a total: done of total, percent, rate and time left; without: done and rate', () => {
  let now = 0;
  const { stream, text } = screen();
  const progress = new Progress(stream, true, () => now, undefined);
  progress.start('copying to x', 1000);
  assert.is(progress.line(), 'copying to x: 0 of 1,000 records (0%)');
  now = 2000;
  progress.update(500);
  assert.is(progress.line(), 'copying to x: 500 of 1,000 records (50%), 250 records/s, 2 s left');
  progress.start('reading y', 8 << 20, 'bytes');
  now = 4000;
  progress.update(2 << 20);
  assert.is(progress.line(), 'reading y: 2.0 of 8.0 MiB (25%), 1.0 MiB/s, 6 s left');
  progress.start('reading level:z', undefined);
  assert.is(progress.line(), 'reading level:z...');
  now = 5000;
  progress.update(300);
  assert.is(progress.line(), 'reading level:z: 300 records, 300 records/s');
  progress.clear();
  assert.equal(frames(text()), [
    'copying to x: 0 of 1,000 records (0%)',
    'copying to x: 500 of 1,000 records (50%), 250 records/s, 2 s left',
    'reading y: 0.0 of 8.0 MiB (0%)',
    'reading y: 2.0 of 8.0 MiB (25%), 1.0 MiB/s, 6 s left',
    'reading level:z...',
    'reading level:z: 300 records, 300 records/s',
  ]);
  assert.ok(takenOff(text()), 'taken off');
});

test('redrawn at most ten times a second; kept shorter than the terminal; nothing without a terminal', () => {
  let now = 0;
  const { stream, text } = screen();
  const progress = new Progress(stream, true, () => now, 30);
  progress.start('a long label for a phase', 100);
  for (let n = 1; n <= 10; n++) {
    now += 20;
    progress.update(n);
  }
  // drawn at the start, then after 100 ms (n = 5) and 200 ms (n = 10)
  assert.is(frames(text()).length, 3);
  for (const frame of frames(text())) assert.ok(frame.length < 30, frame);
  const off = screen();
  const silent = new Progress(off.stream, false, () => now, undefined);
  silent.start('x', 10);
  silent.update(5);
  silent.clear();
  assert.is(off.text(), '');
});

test('time left in seconds, minutes, hours', () => {
  assert.equal([0.2, 4.1, 59, 185, 7800].map(timeLeft), ['1 s', '5 s', '59 s', '3 min 5 s', '2 h 10 min']);
});

test('gen shows how many of how many records it wrote, and takes the line off', async () => {
  await withHome(async (home) => {
    const run = await ledgerstore(['gen', home.path, '--records', '300000'], { tty: true, now: steppingClock() });
    assert.is(run.code, 0, run.stderr);
    const shown = frames(run.stderr);
    assert.is(shown[0], `writing ${home.path}: 0 of 300,000 records (0%)`);
    assert.match(shown[1] ?? '', /^writing .*: 100,000 of 300,000 records \(33%\), [\d,]+ records\/s, \d+ s left$/);
    assert.match(shown.at(-1) ?? '', /: 300,000 of 300,000 records \(100%\), [\d,]+ records\/s$/);
    assert.ok(takenOff(run.stderr), 'taken off');
  });
});

/** The phases a run showed: each frame's words up to its first colon, in order, each once. */
function phases(stderr: string): string[] {
  const labels = frames(stderr).map((frame) =>
    frame.slice(0, frame.indexOf(': ') === -1 ? undefined : frame.indexOf(': ')).replace(/\.\.\.$/, ''),
  );
  return labels.filter((label, n) => labels.indexOf(label) === n);
}

test('copy shows every phase: reading the source, copying, reading the copy, comparing', async () => {
  await withHome(async (home) => {
    // more than one read of the file (8 MiB each), so that the read shows progress between
    writeFileSync(home.path, `${[...syntheticLines({ records: 60_000, seed: 1 })].join('\n')}\n`);
    const to = join(home.dir, 'copy.jsonl');
    const run = await ledgerstore(['copy', home.path, to], { tty: true, now: steppingClock() });
    assert.is(run.code, 0, run.stderr);
    assert.equal(phases(run.stderr), [`reading ${home.path}`, `copying to ${to}`, `checking ${to}`]);
    const shown = frames(run.stderr);
    assert.ok(
      shown.some((f) => /^reading .*: [\d.]+ of [\d.]+ MiB \(\d+%\), [\d.]+ MiB\/s, \d+ s left$/.test(f)),
      'the source in MiB',
    );
    assert.ok(
      shown.some((f) => f.startsWith(`copying to ${to}: 20,000 of 60,000 records (33%), `)),
      'copying',
    );
    assert.ok(
      shown.some((f) => f.startsWith(`checking ${to}: reading it through: `)),
      'reading the copy',
    );
    assert.ok(
      shown.some((f) => /^checking .*: comparing its records with the source's: 20,000 of 60,000 records/.test(f)),
      'comparing',
    );
    assert.ok(takenOff(run.stderr), 'taken off');
  });
});

test('export, verify and index build and rebuild show their phases too', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, `${[...syntheticLines({ records: 20_000, seed: 2 })].join('\n')}\n`);
    const index = join(home.dir, 'index');
    const tty = { tty: true, now: steppingClock() };
    const exported = await ledgerstore(['export', home.path], tty);
    assert.equal(phases(exported.stderr), [`reading ${home.path}`, `exporting ${home.path}`]);
    assert.ok(
      frames(exported.stderr).some((f) => /^exporting .*: [\d,]+ of 20,000 records \(\d+%\)/.test(f)),
      exported.stderr,
    );
    const verified = await ledgerstore(['verify', home.path, '--index', index], tty);
    assert.is(verified.code, 0, verified.stderr);
    assert.equal(phases(verified.stderr.replace(/ledgerstore: .*\n/g, '')), [
      `reading ${home.path}`,
      `digesting the answers of ${home.path}`,
      `digesting the answers of ${index}`,
    ]);
    const rebuilt = await ledgerstore(['index', 'rebuild', home.path, '--index', index], tty);
    assert.is(rebuilt.code, 0, rebuilt.stderr);
    assert.equal(phases(rebuilt.stderr.replace(/ledgerstore: .*\n/g, '')), [
      `emptying ${index}`,
      `reading ${home.path}`,
    ]);
    for (const run of [exported, verified, rebuilt]) assert.ok(takenOff(run.stderr), 'taken off');
  });
});

test('without a terminal, no progress at all', async () => {
  await withHome(async (home) => {
    const run = await ledgerstore(['gen', home.path, '--records', '200000'], {
      signals: new EventEmitter(),
      now: steppingClock(),
    });
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
  });
});

test.run();
