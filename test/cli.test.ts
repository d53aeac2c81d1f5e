/**
 * The `ledgerstore` command line, run as a separate process the way an operator runs it: exit
 * statuses, stdout and stderr exactly, and the ledger file byte for byte after read-only commands.
 */
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ledger, type Record, encodeRecord } from '../lib/index.js';
import { SCHEMA } from '../lib/honcho/read-model.js';
import { type Home, conclude, decided, edit, failed, fleet, sent, skip, turn, turnTo, unconclude, withHome } from './support/ledger.js';

const CLI = fileURLToPath(new URL('../lib/cli.js', import.meta.url));
const RUNBOOK = 'see docs/runbook.md#honcho-ledger-damaged';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `ledgerstore args...` with `input` on stdin, to the end. */
function cli(args: readonly string[], input: string | Buffer = ''): Run {
  const run: SpawnSyncReturns<string> = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.error !== undefined) throw run.error;
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function expectRun(run: Run, code: number, stdout: string, stderr: string): void {
  assert.is(run.stderr, stderr, 'stderr');
  assert.is(run.stdout, stdout, 'stdout');
  assert.is(run.code, code, 'exit status');
}

const lineOf = (record: Record): string => `${encodeRecord(record)}\n`;

const COFFEE = 'Kyle takes his coffee black.';

/**
 * A ledger with every state: 10 records, 7 items decided (sent 2, waiting 3, failed 1, skipped 1),
 * a sent conclusion, and strings that JSON escapes.
 */
const FIXTURE: readonly Record[] = [
  decided(turn('chat-1', 3), turnTo('trusted', 'kyle')),
  decided(edit('2026-09-28-0001', 0), conclude('trusted', COFFEE)),
  decided(turn('chat-2', 1), skip('nothing to send')),
  decided(turn('chat-2', 2), fleet('deploy "v2"\n done', 'chat-2')),
  sent(edit('2026-09-28-0001', 0), ['concl-1']),
  decided(turn('chat-1', 4), turnTo('untrusted', 'ana')),
  failed(turn('chat-1', 4), 503, 'unavailable'),
  decided(turn('chat-1', 5), turnTo('trusted', 'kyle')),
  sent(turn('chat-1', 3), ['msg-a1', 'msg-a2']),
  decided(edit('2026-09-28-0002', 0), unconclude('trusted', COFFEE)),
];
const FIXTURE_TEXT = FIXTURE.map(lineOf).join('');
const FIXTURE_COUNTS = '{"decided":7,"sent":2,"waiting":3,"failed":1,"skipped":1}\n';
/** The outbox of the fixture, in decision order, in canonical form. */
const FIXTURE_OUTBOX = [
  String.raw`{"item":{"type":"turn","session":"chat-2","turn":2},"action":{"type":"fleet","session":"chat-2","text":"deploy \"v2\"\n done"}}`,
  String.raw`{"item":{"type":"turn","session":"chat-1","turn":5},"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}}`,
  String.raw`{"item":{"type":"edit","id":"2026-09-28-0002","part":0},"action":{"type":"unconclude","workspace":"trusted","text":"Kyle takes his coffee black."}}`,
];

/** Runs `body` with the fixture written at `home.path`. */
async function withFixture(body: (home: Home) => Promise<void> | void, text: string | Buffer = FIXTURE_TEXT): Promise<void> {
  await withHome(async (home) => {
    writeFileSync(home.path, text);
    await body(home);
  });
}

/** Asserts that the file holds exactly `bytes`. */
function unchanged(path: string, bytes: string | Buffer): void {
  assert.ok(readFileSync(path).equals(Buffer.from(bytes)), `${path} changed`);
}

// -- verify -----------------------------------------------------------------------------------

test('verify: a whole ledger is ok, with its counts and how long the read took', async () => {
  await withFixture((home) => {
    const run = cli(['verify', home.path]);
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
    const summary = `${home.path}: ok, 10 records, 7 items decided (sent 2, waiting 3, failed 1, skipped 1); read in `;
    assert.ok(run.stdout.startsWith(summary), run.stdout);
    assert.match(run.stdout.slice(summary.length), /^\d+\.\d\d s( \([\d,]+ records\/s\))?\n$/);
    unchanged(home.path, FIXTURE_TEXT);
  });
});

test('verify: a line that breaks a rule is damage, with its line number, and the file is unchanged', async () => {
  const text = FIXTURE.slice(0, 3).map(lineOf).join('') + lineOf(sent(turn('chat-9', 1))) + FIXTURE.slice(3).map(lineOf).join('');
  await withFixture((home) => {
    expectRun(cli(['verify', home.path]), 1, '', `ledgerstore: ${home.path}:4: turn 1 of session chat-9: not waiting to be sent; ${RUNBOOK}\n`);
    unchanged(home.path, text);
  }, text);
});

test('verify: a line that does not parse is damage with serde text; other readers refuse it too', async () => {
  const text = `${FIXTURE_TEXT}{"type":"decided"\n${lineOf(decided(turn('chat-3', 1)))}`;
  await withFixture((home) => {
    const damage = `ledgerstore: ${home.path}:11: EOF while parsing an object at line 2 column 0; ${RUNBOOK}\n`;
    expectRun(cli(['verify', home.path]), 1, '', damage);
    expectRun(cli(['counts', home.path, '--json']), 1, '', damage);
    expectRun(cli(['outbox', home.path]), 1, '', damage);
    unchanged(home.path, text);
  }, text);
});

test('an unreadable ledger (the path is a directory) exits 1 naming the path', async () => {
  await withHome((home) => {
    mkdirSync(home.path);
    for (const args of [['verify', home.path], ['counts', home.path], ['outbox', home.path, '--json']]) {
      const run = cli(args);
      assert.is(run.code, 1);
      assert.is(run.stdout, '');
      assert.match(run.stderr, new RegExp(`^ledgerstore: ${home.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*\\(EISDIR\\)`));
      assert.is(run.stderr.split('\n').length, 2, 'one line');
    }
  });
});

test('a missing ledger reads as empty, with a warning, and is not created', async () => {
  await withHome((home) => {
    expectRun(cli(['counts', home.path, '--json']), 0, '{"decided":0,"sent":0,"waiting":0,"failed":0,"skipped":0}\n', `ledgerstore: ${home.path}: no such file; read as an empty ledger\n`);
    assert.not.ok(existsSync(home.path));
  });
});

// -- a cut-off last line ----------------------------------------------------------------------

test('read-only commands ignore a cut-off last line, say so once, and leave the file as it was', async () => {
  // Cut inside a two-byte character: the reader must work on bytes.
  const whole = Buffer.from(lineOf(decided(turn('chat-1', 9), turnTo('trusted', 'amélie'))));
  const cut = whole.subarray(0, whole.indexOf('é') + 1);
  const text = Buffer.concat([Buffer.from(FIXTURE_TEXT), cut]);
  await withFixture((home) => {
    const warning = `ledgerstore: ${home.path}: a last line cut off by a crash (${cut.length} bytes) was ignored; the next writer drops it\n`;
    const runs: [readonly string[], string][] = [
      [['counts', home.path, '--json'], FIXTURE_COUNTS],
      [['outbox', home.path, '--json'], `${FIXTURE_OUTBOX.join('\n')}\n`],
      [['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}', '--json'], '["msg-a1","msg-a2"]\n'],
      [['conclusion', home.path, 'trusted', COFFEE, '--json'], '{"item":{"type":"edit","id":"2026-09-28-0001","part":0},"id":"concl-1"}\n'],
    ];
    for (const [args, stdout] of runs) {
      expectRun(cli(args), 0, stdout, warning);
      unchanged(home.path, text);
    }
    const run = cli(['verify', home.path]);
    assert.is(run.code, 0);
    assert.is(run.stderr, warning);
    assert.ok(run.stdout.startsWith(`${home.path}: ok, 10 records, `), run.stdout);
    unchanged(home.path, text);
  }, text);
});

test('copy and index build say a ledger is missing, as the read-only commands do', async () => {
  await withHome((home) => {
    const notice = `ledgerstore: ${home.path}: no such file; read as an empty ledger\n`;
    const target = join(home.dir, 'copy.jsonl');
    const copied = cli(['copy', home.path, target]);
    assert.is(copied.code, 0, copied.stderr);
    assert.is(copied.stderr, notice);
    const index = join(home.dir, 'index');
    const built = cli(['index', 'build', home.path, '--index', index]);
    assert.is(built.code, 0, built.stderr);
    assert.is(built.stderr, notice);
    assert.not.ok(existsSync(home.path), 'the ledger is not created');
  });
});

test('a missing LevelDB ledger (or a folder without one) reads as empty, with a notice, creating nothing', async () => {
  await withHome((home) => {
    const missing = `level:${join(home.dir, 'nolv')}`;
    const verified = cli(['verify', missing]);
    assert.is(verified.code, 0);
    assert.is(verified.stderr, `ledgerstore: ${missing}: no such folder; read as an empty ledger\n`);
    assert.ok(verified.stdout.startsWith(`${missing}: ok, 0 records, `), verified.stdout);
    assert.not.ok(existsSync(join(home.dir, 'nolv')));
    mkdirSync(join(home.dir, 'empty'));
    const empty = `level:${join(home.dir, 'empty')}`;
    expectRun(cli(['counts', empty, '--json']), 0, '{"decided":0,"sent":0,"waiting":0,"failed":0,"skipped":0}\n', `ledgerstore: ${empty}: no ledger in the folder; read as an empty ledger\n`);
    assert.equal(readdirSync(join(home.dir, 'empty')), []);
  });
});

test('copy and index build say they ignored a cut-off last line, and leave the file as it was', async () => {
  const tail = '{"type":"sent","time":"2026-09-2';
  const text = FIXTURE_TEXT + tail;
  await withFixture((home) => {
    const warning = `ledgerstore: ${home.path}: a last line cut off by a crash (${tail.length} bytes) was ignored; the next writer drops it\n`;
    const target = join(home.dir, 'copy.jsonl');
    const copied = cli(['copy', home.path, target]);
    assert.is(copied.code, 0, copied.stderr);
    assert.is(copied.stderr, warning);
    unchanged(target, FIXTURE_TEXT);
    const index = join(home.dir, 'index');
    const built = cli(['index', 'build', home.path, '--index', index]);
    assert.is(built.code, 0, built.stderr);
    assert.is(built.stderr, `ledgerstore: ${index}: built the index of ${home.path} (10 records)\n${warning}`);
    unchanged(home.path, text);
  }, text);
});

// -- counts, outbox -------------------------------------------------------------------------

test('counts: --json is one object, keys in order; without, aligned lines', async () => {
  await withFixture((home) => {
    expectRun(cli(['counts', home.path, '--json']), 0, FIXTURE_COUNTS, '');
    expectRun(cli(['--json', 'counts', home.path]), 0, FIXTURE_COUNTS, '');
    expectRun(cli(['counts', home.path]), 0, 'decided  7\nsent     2\nwaiting  3\nfailed   1\nskipped  1\n', '');
  });
});

test('outbox: --json gives each waiting item and its action, canonical, in decision order', async () => {
  await withFixture((home) => {
    expectRun(cli(['outbox', home.path, '--json']), 0, `${FIXTURE_OUTBOX.join('\n')}\n`, '');
  });
});

test('outbox: without --json, one readable row per waiting item', async () => {
  await withFixture((home) => {
    const run = cli(['outbox', home.path]);
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
    const rows = run.stdout.split('\n');
    assert.is(rows.pop(), '');
    assert.is(rows.length, 3);
    assert.match(rows[0] ?? '', /^turn 2 of session chat-2 +-> fleet message \(session chat-2\): "deploy \\"v2\\"\\n done"$/);
    assert.match(rows[1] ?? '', /^turn 5 of session chat-1 +-> turn to trusted as kyle$/);
    assert.match(rows[2] ?? '', /^part 0 of edit 2026-09-28-0002 +-> unconclude in trusted: "Kyle takes his coffee black."$/);
    // The arrows line up.
    assert.is(new Set(rows.map((row) => row.indexOf('->'))).size, 1);
  });
});

test('outbox: an empty outbox prints nothing', async () => {
  await withFixture((home) => {
    expectRun(cli(['outbox', home.path, '--json']), 0, '', '');
  }, FIXTURE.slice(0, 3).map(lineOf).join('') + lineOf(sent(turn('chat-1', 3))) + lineOf(failed(edit('2026-09-28-0001', 0))));
});

/** Writes a ledger of `n` waiting turns, quickly (one write, not `n` appends). */
function manyWaiting(path: string, n: number): void {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(encodeRecord(decided(turn(`chat-${i % 50}`, i))));
  writeFileSync(path, `${lines.join('\n')}\n`);
}

test('outbox: a large outbox streams out whole, in order', async () => {
  await withHome((home) => {
    manyWaiting(home.path, 20_000);
    const run = cli(['outbox', home.path, '--json']);
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
    const rows = run.stdout.split('\n');
    assert.is(rows.pop(), '');
    assert.is(rows.length, 20_000);
    assert.is(rows[12_345], `{"item":{"type":"turn","session":"chat-45","turn":12345},"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}}`);
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

// -- sent-ids, conclusion ---------------------------------------------------------------------

test('sent-ids: the ids as a JSON array, or null; one a line without --json', async () => {
  await withFixture((home) => {
    expectRun(cli(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}', '--json']), 0, '["msg-a1","msg-a2"]\n', '');
    // Any key order serde accepts.
    expectRun(cli(['sent-ids', '--json', home.path, '{"turn":3, "session":"chat-1", "type":"turn"}']), 0, '["msg-a1","msg-a2"]\n', '');
    expectRun(cli(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}']), 0, 'msg-a1\nmsg-a2\n', '');
    for (const waitingFailedSkippedUnknown of [
      '{"type":"turn","session":"chat-1","turn":5}',
      '{"type":"turn","session":"chat-1","turn":4}',
      '{"type":"turn","session":"chat-2","turn":1}',
      '{"type":"edit","id":"nope","part":7}',
    ]) {
      expectRun(cli(['sent-ids', home.path, waitingFailedSkippedUnknown, '--json']), 0, 'null\n', '');
    }
    const none = cli(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":5}']);
    assert.is(none.code, 0);
    assert.is(none.stdout.split('\n').length, 2, 'one line');
    assert.match(none.stdout, /^turn 5 of session chat-1 has no sent record/);
  });
});

test('sent-ids: an item that is not an item is bad input: exit 2 with serde text', async () => {
  await withFixture((home) => {
    expectRun(cli(['sent-ids', home.path, '{"type":"turn","session":"chat-1"}']), 2, '', 'ledgerstore: the item {"type":"turn","session":"chat-1"}: missing field `turn`\n');
    expectRun(
      cli(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3,"x":1}']),
      2,
      '',
      'ledgerstore: the item {"type":"turn","session":"chat-1","turn":3,"x":1}: unknown field `x`, expected `session` or `turn`\n',
    );
    unchanged(home.path, FIXTURE_TEXT);
  });
});

test('conclusion: the conclusion to delete as JSON, or null', async () => {
  await withFixture((home) => {
    const found = '{"item":{"type":"edit","id":"2026-09-28-0001","part":0},"id":"concl-1"}\n';
    expectRun(cli(['conclusion', home.path, 'trusted', COFFEE, '--json']), 0, found, '');
    expectRun(cli(['conclusion', home.path, 'untrusted', COFFEE, '--json']), 0, 'null\n', '');
    expectRun(cli(['conclusion', home.path, 'trusted', 'another text', '--json']), 0, 'null\n', '');
    // `--` ends the flags, so that a text may start with a dash.
    expectRun(cli(['conclusion', '--json', home.path, 'trusted', '--', '--json']), 0, 'null\n', '');
    const human = cli(['conclusion', home.path, 'trusted', COFFEE]);
    assert.is(human.code, 0);
    assert.match(human.stdout, /^concl-1 .*part 0 of edit 2026-09-28-0001/);
  });
});

test('conclusion: a workspace that is not trusted, untrusted or fleet is a usage error', async () => {
  await withFixture((home) => {
    const run = cli(['conclusion', home.path, 'public', COFFEE, '--json']);
    assert.is(run.code, 2);
    assert.is(run.stdout, '');
    assert.ok(run.stderr.startsWith('ledgerstore: the workspace must be one of trusted, untrusted, fleet, not "public"\n'), run.stderr);
    assert.match(run.stderr, /usage: ledgerstore conclusion <ledger> <workspace> <text>/);
  });
});

// -- append -----------------------------------------------------------------------------------

test('append: each line appended in order, canonical, and nothing on stdout', async () => {
  await withHome((home) => {
    const first = decided(turn('chat-1', 3), turnTo('trusted', 'kyle'));
    const second = sent(turn('chat-1', 3), ['msg-1']);
    // Keys in another order and whitespace: read as serde reads it, written canonically.
    const loose = ' {"item": {"turn": 3, "session": "chat-1", "type": "turn"}, "ids": ["msg-1"], "time": "2026-09-28T10:00:00.000Z", "type": "sent"} ';
    expectRun(cli(['append', home.path], `${encodeRecord(first)}\n${loose}\n`), 0, '', `appended 2 records to ${home.path}\n`);
    unchanged(home.path, lineOf(first) + lineOf(second));
  });
});

test('append: a last line without its newline is a line; empty input appends nothing', async () => {
  await withHome((home) => {
    const record = decided(turn('chat-1', 1));
    expectRun(cli(['append', home.path], ''), 0, '', `appended 0 records to ${home.path}\n`);
    assert.not.ok(existsSync(home.path), 'nothing appended, no file');
    expectRun(cli(['append', home.path], encodeRecord(record)), 0, '', `appended 1 record to ${home.path}\n`);
    unchanged(home.path, lineOf(record));
  });
});

test('append: a refused record stops it with the error; the ones before it stay', async () => {
  await withFixture((home) => {
    const before = decided(turn('chat-7', 1), turnTo('fleet', 'bot'));
    const after = decided(turn('chat-7', 2));
    const input = [before, decided(turn('chat-1', 3)), after].map(lineOf).join('');
    expectRun(
      cli(['append', home.path], input),
      1,
      '',
      'ledgerstore: turn 3 of session chat-1: decided already\n' + 'ledgerstore: stopped at stdin:2; the 1 record before it was appended\n',
    );
    unchanged(home.path, FIXTURE_TEXT + lineOf(before));
  });
});

test('append: a line that does not decode stops it, naming the stdin line', async () => {
  await withFixture((home) => {
    const first = decided(turn('chat-7', 1));
    const second = decided(turn('chat-7', 2));
    const input = `${lineOf(first)}${lineOf(second)}{"type":"decided"}\n${lineOf(decided(turn('chat-7', 3)))}`;
    expectRun(
      cli(['append', home.path], input),
      1,
      '',
      'ledgerstore: stdin:3: missing field `time`\n' + 'ledgerstore: stopped at stdin:3; the 2 records before it were appended\n',
    );
    unchanged(home.path, FIXTURE_TEXT + lineOf(first) + lineOf(second));
  });
});

test('append: stdin is read as bytes: invalid UTF-8 is refused, not replaced', async () => {
  await withHome((home) => {
    const text = encodeRecord(decided(turn('chat-1', 1), turnTo('trusted', 'kyle')));
    const at = text.indexOf('kyle');
    const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff]), Buffer.from(`${text.slice(at)}\n`)]);
    const run = cli(['append', home.path], bytes);
    assert.is(run.code, 1);
    assert.is(run.stdout, '');
    assert.match(run.stderr, /^ledgerstore: stdin:1: invalid unicode code point at line 1 column \d+\n/);
    assert.not.ok(existsSync(home.path));
  });
});

test('append: the writer drops a cut-off last line before appending', async () => {
  const tail = '{"type":"sent","time":"2026-09-2';
  await withFixture((home) => {
    const record = decided(turn('chat-7', 1));
    const run = cli(['append', home.path], lineOf(record));
    assert.is(run.code, 0);
    assert.match(run.stderr, new RegExp(`a last line cut off by a crash \\(${tail.length} bytes\\) was dropped\\n`));
    unchanged(home.path, FIXTURE_TEXT + lineOf(record));
  }, FIXTURE_TEXT + tail);
});

test('append: a damaged ledger is refused whole and left as it was', async () => {
  const text = `${FIXTURE_TEXT}not json\n`;
  await withFixture((home) => {
    const run = cli(['append', home.path], lineOf(decided(turn('chat-7', 1))));
    assert.is(run.code, 1);
    assert.is(run.stdout, '');
    assert.ok(run.stderr.startsWith(`ledgerstore: ${home.path}:11: expected ident at line 1 column 2; ${RUNBOOK}\n`), run.stderr);
    unchanged(home.path, text);
  }, text);
});

// -- check ------------------------------------------------------------------------------------

test('check: ok with the canonical line, or err with why; exit 1 when any is refused', async () => {
  const canonical = encodeRecord(decided(turn('chat-1', 3), turnTo('trusted', 'kyle')));
  const reordered = '{ "action":{"speaker":"kyle","workspace":"trusted","type":"turn"},\t"item":{"turn":3,"session":"chat-1","type":"turn"}, "time":"2026-09-28T10:00:00.000Z","type":"decided" }';
  const sequence = '["failed","2026-09-28T10:00:00.000Z",{"type":"edit","id":"e","part":1},404,"gone"]';
  const input = [canonical, reordered, '{"type":"decided"}', '', sequence, '{"type":"sent","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-1","turn":3},"ids":[],"more":1}'].join('\n');
  expectRun(
    cli(['check'], `${input}\n`),
    1,
    [
      `ok ${canonical}`,
      `ok ${canonical}`,
      'err missing field `time`',
      'err EOF while parsing a value at line 2 column 0',
      'ok {"type":"failed","time":"2026-09-28T10:00:00.000Z","item":{"type":"edit","id":"e","part":1},"status":404,"kind":"gone"}',
      'err unknown field `more`, expected one of `time`, `item`, `ids`',
      '',
    ].join('\n'),
    'ledgerstore: 3 of 6 lines refused\n',
  );
});

test('check: all accepted is exit 0; empty input is no lines', async () => {
  const line = encodeRecord(sent(turn('chat-1', 3), ['a', 'b']));
  expectRun(cli(['check'], `${line}\n${line}`), 0, `ok ${line}\nok ${line}\n`, '');
  expectRun(cli(['check'], ''), 0, '', '');
});

// -- gen --------------------------------------------------------------------------------------

test('gen: the same seed gives the same bytes; the ledger opens and verifies', async () => {
  await withHome(async (home) => {
    const a = join(home.dir, 'a.jsonl');
    const b = join(home.dir, 'b.jsonl');
    const c = join(home.dir, 'c.jsonl');
    const run = cli(['gen', a, '--records', '3000', '--seed', '7']);
    assert.is(run.code, 0, run.stderr);
    assert.match(run.stdout, /^.*a\.jsonl: wrote 3000 records, \d+ bytes, in \d+\.\d\d s\n$/);
    assert.is(cli(['--seed=7', 'gen', '--records=3000', b]).code, 0);
    assert.is(cli(['gen', c, '--records', '3000', '--seed', '8']).code, 0);
    assert.ok(readFileSync(a).equals(readFileSync(b)), 'same seed, same bytes');
    assert.not.ok(readFileSync(a).equals(readFileSync(c)), 'another seed, other bytes');
    assert.is(readFileSync(a, 'utf8').split('\n').length, 3001);

    const verify = cli(['verify', a]);
    assert.is(verify.code, 0, verify.stderr);
    assert.ok(verify.stdout.startsWith(`${a}: ok, 3000 records, `), verify.stdout);
    const ledger = await Ledger.open(a, { readOnly: true });
    try {
      assert.equal(JSON.parse(cli(['counts', a, '--json']).stdout), await ledger.counts());
      assert.is(cli(['outbox', a, '--json']).stdout.split('\n').length - 1, (await ledger.outbox()).length);
    } finally {
      await ledger.close();
    }
  });
});

test('gen: an existing file is refused, saying gen writes only a new one, and left as it was', async () => {
  await withHome((home) => {
    writeFileSync(home.path, 'keep me\n');
    const refusal = 'exists already; gen writes only a new file or an empty ledger, never over an existing one';
    // No runbook pointer: nothing is wrong with the disk (the one for I/O failures misled).
    expectRun(cli(['gen', home.path, '--records', '10']), 1, '', `ledgerstore: ${home.path}: ${refusal}\n`);
    expectRun(cli(['gen', `jsonl:${home.path}`, '--records', '10']), 1, '', `ledgerstore: jsonl:${home.path}: ${refusal}\n`);
    unchanged(home.path, 'keep me\n');
    const empty = join(home.dir, 'empty.jsonl');
    writeFileSync(empty, '');
    expectRun(cli(['gen', empty, '--records', '10']), 1, '', `ledgerstore: ${empty}: ${refusal}\n`);
    unchanged(empty, '');
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
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      const stopped = await genStoppedBy(home.path, signal);
      assert.is(stopped.code, code, signal);
      assert.is(stopped.stderr, `ledgerstore: ${home.path}: gen stopped by ${signal}; nothing was written\n`, signal);
      assert.not.ok(existsSync(stopped.temp), `${signal}: ${stopped.temp} is left`);
      assert.equal(readdirSync(home.dir), [], signal);
    }
  });
});

test('gen: a missing directory is reported with the path given, not the temporary file', async () => {
  await withHome((home) => {
    const file = join(home.dir, 'nodir', 'g.jsonl');
    expectRun(cli(['gen', file, '--records', '3']), 1, '', `ledgerstore: ${file}: no such file or directory (ENOENT); see docs/runbook.md#ledger-unwritable\n`);
    assert.equal(readdirSync(home.dir), []);
  });
});

// -- usage ------------------------------------------------------------------------------------

test('every command takes a ledger as level:<folder>, jsonl:<path> or memory:', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const level = `level:${join(home.dir, 'ledger.level')}`;
    const copied = cli(['copy', home.path, level]);
    assert.is(copied.code, 0, copied.stderr);
    assert.match(copied.stdout, new RegExp(`^${level}: copied 10 records from ${home.path} in [0-9.]+ s, and read it back: 7 decided \\(sent 2, waiting 3, failed 1, skipped 1\\)\n$`));
    expectRun(cli(['counts', level, '--json']), 0, FIXTURE_COUNTS, '');
    expectRun(cli(['counts', `jsonl:${home.path}`, '--json']), 0, FIXTURE_COUNTS, '');
    expectRun(cli(['outbox', level, '--json']), 0, FIXTURE_OUTBOX.map((l) => `${l}\n`).join(''), '');
    expectRun(cli(['export', level]), 0, FIXTURE_TEXT, '');
    expectRun(cli(['counts', 'memory:', '--json']), 0, '{"decided":0,"sent":0,"waiting":0,"failed":0,"skipped":0}\n', '');
    const appended = cli(['append', level], lineOf(sent(turn('chat-1', 5), ['m-5'])));
    assert.is(appended.code, 0, appended.stderr);
    expectRun(cli(['sent-ids', level, '{"type":"turn","session":"chat-1","turn":5}', '--json']), 0, '["m-5"]\n', '');
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

test('export writes canonical lines, whatever form the file has them in', async () => {
  await withHome(async (home) => {
    const loose = '{ "item":{"turn":3,"session":"chat-1","type":"turn"}, "action":{"speaker":"kyle","workspace":"trusted","type":"turn"},"time":"2026-09-28T10:00:00.000Z","type":"decided"}\r\n';
    writeFileSync(home.path, loose);
    expectRun(cli(['export', home.path]), 0, lineOf(decided(turn('chat-1', 3), turnTo('trusted', 'kyle'))), '');
    assert.is(readFileSync(home.path, 'utf8'), loose, 'export changes nothing');
  });
});

test('copy refuses a target that holds records, and a damaged source, and changes neither', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const target = join(home.dir, 'target.jsonl');
    writeFileSync(target, lineOf(decided(turn('x', 1))));
    expectRun(cli(['copy', home.path, target]), 1, '', `ledgerstore: ${target}: holds 1 record already; a copy goes only to an empty ledger\n`);
    assert.is(readFileSync(target, 'utf8'), lineOf(decided(turn('x', 1))));
    const damaged = join(home.dir, 'damaged.jsonl');
    writeFileSync(damaged, lineOf(sent(turn('x', 1))));
    const empty = join(home.dir, 'empty.jsonl');
    expectRun(cli(['copy', damaged, empty]), 1, '', `ledgerstore: ${damaged}:1: turn 1 of session x: not waiting to be sent; ${RUNBOOK}\n`);
    assert.not.ok(existsSync(empty), 'the target was not even created');
  });
});

test('gen fills a ledger on any backend, with the same records as the file it would write', async () => {
  await withHome(async (home) => {
    const level = `level:${join(home.dir, 'gen.level')}`;
    const filled = cli(['gen', level, '--records', '3000', '--seed', '5']);
    assert.is(filled.code, 0, filled.stderr);
    assert.match(filled.stdout, new RegExp(`^${level}: wrote 3000 records, in [0-9.]+ s\n$`));
    assert.is(cli(['gen', home.path, '--records', '3000', '--seed', '5']).code, 0);
    expectRun(cli(['export', level]), 0, readFileSync(home.path, 'utf8'), '');
    // It names the target as given, and gen, not copy.
    expectRun(cli(['gen', level, '--records', '10']), 1, '', `ledgerstore: ${level}: holds 3000 records already; gen writes only a new file or an empty ledger, never over an existing one\n`);
    expectRun(cli(['export', level]), 0, readFileSync(home.path, 'utf8'), '');
  });
});

test('--index keeps a read model: queries answer from it, index status says where it stands', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const index = join(home.dir, 'index');
    expectRun(cli(['counts', home.path, '--json', '--index', index]), 0, FIXTURE_COUNTS, `ledgerstore: ${index}: built the index of ${home.path} (10 records)\n`);
    expectRun(cli(['outbox', home.path, '--json', '--index', index]), 0, FIXTURE_OUTBOX.map((l) => `${l}\n`).join(''), '');
    expectRun(cli(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}', '--json', '--index', index]), 0, '["msg-a1","msg-a2"]\n', '');
    const appended = cli(['append', home.path, '--index', index], lineOf(sent(turn('chat-1', 5), ['m-5'])));
    assert.is(appended.code, 0, appended.stderr);
    expectRun(
      cli(['index', 'status', home.path, '--index', index]),
      0,
      [
        `index:      ${index}`,
        `schema:     ${SCHEMA} (this ledgerstore: ${SCHEMA})`,
        `checkpoint: record 11 of ${home.path}`,
        'log:        up to date',
        'counts:     7 decided (sent 3, waiting 2, failed 1, skipped 1)',
        '',
      ].join('\n'),
      '',
    );
    writeFileSync(home.path, `${readFileSync(home.path, 'utf8')}${lineOf(sent(turn('chat-2', 2), ['m-6']))}`);
    assert.match(cli(['index', 'status', home.path, '--index', index]).stdout, /log: {8}1 record behind \(caught up at the next open\)/);
    const verified = cli(['verify', home.path, '--index', index]);
    assert.is(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, new RegExp(`\n${index}: ok, the index answers every query as a fresh replay does\n$`));
    const rebuilt = cli(['index', 'rebuild', home.path, '--index', index]);
    assert.is(rebuilt.code, 0, rebuilt.stderr);
    assert.match(rebuilt.stdout, new RegExp(`^${index}: up to date with ${home.path} at record 12, in [0-9.]+ s\n$`));
    expectRun(cli(['index', 'frobnicate', home.path, '--index', index]), 2, '', 'ledgerstore: index takes build, status or rebuild, not "frobnicate"\nusage: ledgerstore index build|status|rebuild <ledger> --index <folder>\n(ledgerstore --help lists every command)\n');
    assert.is(cli(['index', 'build', home.path]).code, 2);
  });
});

test('index: a ledger argument that names no ledger is refused before the index is touched', async () => {
  await withFixture((home) => {
    const index = join(home.dir, 'index');
    assert.is(cli(['index', 'build', home.path, '--index', index]).code, 0);
    const before = cli(['index', 'status', home.path, '--index', index]);
    assert.match(before.stdout, /checkpoint: record 10 of /);
    for (const action of ['rebuild', 'build', 'status']) {
      const run = cli(['index', action, 'memory:x', '--index', index]);
      assert.is(run.code, 2, action);
      assert.is(run.stdout, '', action);
      assert.match(run.stderr, /memory: takes nothing after the colon/, action);
    }
    expectRun(cli(['index', 'status', home.path, '--index', index]), 0, before.stdout, '');
    const fresh = join(home.dir, 'fresh');
    assert.is(cli(['index', 'rebuild', 'level:', '--index', fresh]).code, 2);
    assert.not.ok(existsSync(fresh), 'a refused command creates no index');
  });
});

test('index status of a folder with no index says so and creates nothing', async () => {
  await withFixture((home) => {
    const missing = join(home.dir, 'nosuch');
    expectRun(
      cli(['index', 'status', home.path, '--index', missing]),
      0,
      `index:      ${missing}\ncheckpoint: none: there is no index at ${missing} (no such folder); the next open with --index ${missing} builds it\n`,
      '',
    );
    assert.not.ok(existsSync(missing), 'no folder made');
    const empty = join(home.dir, 'empty');
    mkdirSync(empty);
    expectRun(
      cli(['index', 'status', home.path, '--index', empty]),
      0,
      `index:      ${empty}\ncheckpoint: none: there is no index at ${empty} (no read model in the folder); the next open with --index ${empty} builds it\n`,
      '',
    );
    assert.equal(readdirSync(empty), [], 'no database made');
  });
});

test('--index naming a file, not a folder, says so and leaves the file as it was', async () => {
  await withFixture((home) => {
    const file = join(home.dir, 'e.jsonl');
    writeFileSync(file, 'keep me\n');
    const notFolder = `ledgerstore: ${file}: not a directory (ENOTDIR); see docs/runbook.md#ledger-unwritable\n`;
    expectRun(cli(['counts', home.path, '--index', file]), 1, '', notFolder);
    expectRun(cli(['index', 'build', home.path, '--index', file]), 1, '', notFolder);
    expectRun(cli(['index', 'status', home.path, '--index', file]), 1, '', notFolder);
    unchanged(file, 'keep me\n');
  });
});

const HOLDER = fileURLToPath(new URL('./support/hold-ledger.js', import.meta.url));

/** Runs `body` while another process holds `target` open for writing (with the read model in `index`). */
async function whileHeld(args: readonly string[], body: () => void): Promise<void> {
  const child = spawn(process.execPath, [HOLDER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const said = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (data: Buffer) => resolve(data.toString()));
      child.once('exit', (code) => reject(new Error(`the holder exited with ${String(code)}`)));
    });
    assert.match(said, /^ready \d+\n$/);
    body();
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

test('a LevelDB ledger or index held elsewhere: the refusal says readers are kept out too', async () => {
  await withFixture(async (home) => {
    const folder = join(home.dir, 'ledger.level');
    assert.is(cli(['copy', home.path, `level:${folder}`]).code, 0);
    await whileHeld([`level:${folder}`], () => {
      const run = cli(['counts', `level:${folder}`]);
      expectRun(run, 1, '', `ledgerstore: ${folder}: the LevelDB ledger is open elsewhere (another process, or another open in this one); LevelDB allows one open at a time, even to read; see docs/runbook.md#ledger-locked\n`);
    });
    const index = join(home.dir, 'index');
    await whileHeld([home.path, index], () => {
      const run = cli(['counts', home.path, '--json', '--index', index]);
      expectRun(run, 1, '', `ledgerstore: ${index}: the index is open elsewhere (another process, or another open in this one); LevelDB allows one open at a time, even to read; see docs/runbook.md#ledger-locked\n`);
      // What the runbook offers instead: the JSONL ledger read beside its writer, without --index.
      expectRun(cli(['counts', home.path, '--json']), 0, FIXTURE_COUNTS, '');
    });
    const runbook = readFileSync(fileURLToPath(new URL('../../docs/runbook.md', import.meta.url)), 'utf8');
    assert.ok(runbook.includes('## ledger-locked\n'), 'the anchor is there');
    assert.ok(runbook.includes('even to read'), 'the runbook says readers are kept out of LevelDB');
  });
});

test('a ledger that names no ledger is a usage error', () => {
  for (const target of ['level:', 'memory:x', 'jsonl:']) {
    const run = cli(['counts', target]);
    assert.is(run.code, 2, target);
    assert.match(run.stderr, /a ledger is a path, jsonl:<path>, level:<folder> or memory:/);
  }
});

test('usage errors exit 2 with a usage text on stderr and nothing on stdout', async () => {
  await withFixture((home) => {
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
    ];
    for (const [args, message] of mistakes) {
      const run = cli(args);
      assert.is(run.code, 2, args.join(' '));
      assert.is(run.stdout, '', args.join(' '));
      assert.ok(run.stderr.startsWith(message), `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr.slice(message.length), /^usage:/, args.join(' '));
    }
    assert.not.ok(existsSync(join(home.dir, 'g.jsonl')));
    unchanged(home.path, FIXTURE_TEXT);
  });
});

test('--help and help print the usage on stdout and exit 0', () => {
  for (const args of [['--help'], ['help'], ['-h'], ['counts', '--help']]) {
    const run = cli(args);
    assert.is(run.code, 0, args.join(' '));
    assert.is(run.stderr, '');
    assert.ok(run.stdout.startsWith('usage: ledgerstore <command>'), run.stdout);
    for (const command of ['verify', 'counts', 'outbox', 'sent-ids', 'conclusion', 'append', 'check', 'gen']) {
      assert.ok(run.stdout.includes(`ledgerstore ${command}`), command);
    }
  }
});

test('the bin starts with its shebang', () => {
  assert.ok(readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n'));
});

test.run();
