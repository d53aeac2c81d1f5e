/**
 * `ledgerstore follow` on a JSONL file, between real processes: a writer process appends
 * (through `Ledger`, as memoryd's daemon would), a follower process prints each record as it
 * lands, whole lines only, in order; it stops on SIGINT and SIGTERM, and when its reader goes
 * away. In process: its words, `--from`, and a record that breaks the rules. (On PostgreSQL:
 * `test/postgres/ledgers.test.ts`.)
 */
import { appendFileSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeRecordText, encodeRecord, type Record } from '../lib/index.js';
import { until } from './conformance/common.js';
import { CLI, ledgerstore, lineOf } from './support/cli.js';
import { decided, type Home, sent, skip, turn, withHome } from './support/ledger.js';
import { LineProcess } from './support/line-process.js';
import { CRASH_SEED } from './support/seed.js';

const WRITER = fileURLToPath(new URL('./support/ledger-writer.js', import.meta.url));

const follower = (home: Home, ...flags: string[]): LineProcess =>
  new LineProcess([CLI, 'follow', home.path, ...flags], 'follower');

/** The records of the file, in order. */
const recordsOf = (path: string): Record[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => decodeRecordText(line));

/** How many descriptors the child has open on `path` (Linux's `/proc/<pid>/fd`). */
function opensOf(child: LineProcess, path: string): number {
  const fds = `/proc/${child.process.pid}/fd`;
  return readdirSync(fds).filter((fd) => {
    try {
      return readlinkSync(`${fds}/${fd}`) === path;
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}

/** What a `--json` follower printed: each line's position and record, as canonical text. */
const printed = (lines: readonly string[]): string[] =>
  lines.map((text) => {
    const { position, record } = JSON.parse(text) as { position: number; record: unknown };
    return `${position} ${encodeRecord(record)}`;
  });

test('a follower process prints every record a writer process appends, as it lands, in order, whole; SIGINT stops it with 130', async () => {
  await withHome(async (home) => {
    const count = 60;
    // the file is not there yet: the follower waits for the writer to make it
    const follow = follower(home, '--json', '--from', '0');
    await until(
      () => /: no such file yet; waiting for it to be made/.test(follow.stderr),
      'the follower to open before the file is made',
    );
    const writer = new LineProcess(
      [WRITER, home.path, '0', 'steady', String(count), String(CRASH_SEED), '5'],
      'writer',
    );
    try {
      await writer.said('ready');
      writer.send('go');
      await writer.said('done');
      await follow.waitFor((lines) => lines.length >= count, 'the follower to print every record');
    } finally {
      await writer.end();
      follow.process.kill('SIGINT');
      await follow.exited;
    }
    assert.equal(follow.ended, { code: 130, signal: null }, follow.stderr);
    assert.is(follow.partial, '', 'no line without its newline');
    assert.equal(
      printed(follow.lines),
      recordsOf(home.path).map((record, position) => `${position} ${encodeRecord(record)}`),
    );
  });
});

test('a line is taken only once its newline is there: half a line written waits, and the follower prints it whole', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, lineOf(decided(turn('h', 0), skip())));
    const follow = follower(home, '--json', '--from', '0');
    try {
      await follow.waitFor((lines) => lines.length === 1, 'the first record');
      const half = lineOf(decided(turn('h', 1)));
      appendFileSync(home.path, half.slice(0, 40));
      // time for the follower to look at the half line (the assertions do not depend on it)
      await new Promise((resolve) => setTimeout(resolve, 200));
      appendFileSync(home.path, half.slice(40) + lineOf(sent(turn('h', 1))));
      await follow.waitFor((lines) => lines.length === 3, 'the rest');
    } finally {
      follow.process.kill('SIGTERM');
      await follow.exited;
    }
    assert.equal(follow.ended, { code: 143, signal: null }, follow.stderr);
    assert.is(follow.stderr, `ledgerstore: following ${home.path} from record 0 (Ctrl-C stops)\n`);
    assert.equal(printed(follow.lines), [
      `0 ${encodeRecord(decided(turn('h', 0), skip()))}`,
      `1 ${encodeRecord(decided(turn('h', 1)))}`,
      `2 ${encodeRecord(sent(turn('h', 1)))}`,
    ]);
  });
});

test('a follower whose reader goes away ends with 0 at the next record it would print', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, lineOf(decided(turn('r', 0), skip())));
    const follow = follower(home, '--from', '0');
    await follow.waitFor((lines) => lines.length === 1, 'the first record');
    follow.process.stdout.destroy();
    appendFileSync(home.path, lineOf(decided(turn('r', 1), skip())));
    assert.equal(await follow.exited, { code: 0, signal: null }, follow.stderr);
  });
});

test('follow: from the end by default, from --from N when given, each record in words', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, [decided(turn('c', 1)), decided(turn('c', 2), skip('quiet'))].map(lineOf).join(''));
    const fromOne = follower(home, '--from', '1');
    const fromEnd = follower(home);
    try {
      await fromOne.waitFor((lines) => lines.length === 1, 'the record at 1');
      // the follower from the end has taken the end once its watch holds the file beside its log
      await until(() => opensOf(fromEnd, home.path) >= 2, 'the follower from the end to watch the file');
      appendFileSync(home.path, lineOf(sent(turn('c', 1), ['m-1', 'm 2'])));
      await fromOne.waitFor((lines) => lines.length === 2, 'the new record');
      await fromEnd.waitFor((lines) => lines.length === 1, 'the new record');
    } finally {
      for (const f of [fromOne, fromEnd]) f.process.kill('SIGINT');
      await Promise.all([fromOne.exited, fromEnd.exited]);
    }
    assert.equal(fromOne.lines, [
      '1  decided turn 2 of session c -> skip: "quiet"',
      '2  sent turn 1 of session c (ids: m-1, "m 2")',
    ]);
    assert.equal(fromEnd.lines, ['2  sent turn 1 of session c (ids: m-1, "m 2")']);
    assert.is(fromOne.ended?.code, 130);
    assert.is(fromOne.stderr, `ledgerstore: following ${home.path} from record 1 (Ctrl-C stops)\n`);
    assert.is(fromEnd.stderr, `ledgerstore: following ${home.path} from record 2, its end (Ctrl-C stops)\n`);
  });
});

test("follow --from past the ledger's end says so on stderr, then prints that record when it lands", async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, lineOf(decided(turn('e', 1))));
    const ahead = follower(home, '--from', '2');
    try {
      await until(() => ahead.stderr !== '', 'the note');
      assert.is(
        ahead.stderr,
        `ledgerstore: following ${home.path} from record 2: it holds 1 record; waiting for record 2 (Ctrl-C stops)\n`,
      );
      appendFileSync(home.path, lineOf(decided(turn('e', 2))) + lineOf(decided(turn('e', 3))));
      await ahead.waitFor((lines) => lines.length === 1, 'record 2');
    } finally {
      ahead.process.kill('SIGINT');
      await ahead.exited;
    }
    assert.equal(ahead.lines, ['2  decided turn 3 of session e -> turn to trusted as kyle']);
  });
});

test('follow: --from must be a whole number (exit 2); a record that breaks the rules ends it (exit 1)', async () => {
  await withHome(async (home) => {
    const bad = await ledgerstore(['follow', home.path, '--from', 'x']);
    assert.is(bad.code, 2);
    assert.match(bad.stderr, /--from must be a whole number/);
    writeFileSync(home.path, lineOf(decided(turn('d', 1))));
    const follow = follower(home, '--from', '0');
    await follow.waitFor((lines) => lines.length === 1, 'the first record');
    appendFileSync(home.path, lineOf(decided(turn('d', 1))));
    assert.equal(await follow.exited, { code: 1, signal: null });
    assert.match(follow.stderr, /:2: .*decided already.*see docs\/runbook\.md#honcho-ledger-damaged/);
  });
});

test.run();
