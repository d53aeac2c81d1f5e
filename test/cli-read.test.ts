/**
 * The command line's read-only commands (`verify`, `counts`, `outbox`, `sent-ids`, `conclusion`,
 * `export`), run in process: exit statuses, stdout and stderr exactly, and the ledger file byte
 * for byte after each.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  COFFEE,
  EMPTY_COUNTS,
  expectRun,
  FIXTURE,
  FIXTURE_COUNTS,
  FIXTURE_OUTBOX,
  FIXTURE_TEXT,
  ledgerstore,
  lineOf,
  literal,
  manyWaiting,
  RUNBOOK,
  unchanged,
  withFixture,
} from './support/cli.js';
import { decided, edit, failed, sent, turn, turnTo, withHome } from './support/ledger.js';

// -- verify -----------------------------------------------------------------------------------

test('verify: a whole ledger is ok, with its counts and how long the read took', async () => {
  await withFixture(async (home) => {
    const run = await ledgerstore(['verify', home.path]);
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
    const summary = `${home.path}: ok, 10 records, 7 items decided (sent 2, waiting 3, failed 1, skipped 1); read in `;
    assert.ok(run.stdout.startsWith(summary), run.stdout);
    assert.match(run.stdout.slice(summary.length), /^\d+\.\d\d s( \([\d,]+ records\/s\))?\n$/);
    unchanged(home.path, FIXTURE_TEXT);
  });
});

test('verify: a line that breaks a rule is damage, with its line number, and the file is unchanged', async () => {
  const text =
    FIXTURE.slice(0, 3).map(lineOf).join('') + lineOf(sent(turn('chat-9', 1))) + FIXTURE.slice(3).map(lineOf).join('');
  await withFixture(async (home) => {
    expectRun(
      await ledgerstore(['verify', home.path]),
      1,
      '',
      `ledgerstore: ${home.path}:4: turn 1 of session chat-9: not waiting to be sent; ${RUNBOOK}\n`,
    );
    unchanged(home.path, text);
  }, text);
});

test('verify: a line that does not parse is damage with serde text; other readers refuse it too', async () => {
  const text = `${FIXTURE_TEXT}{"type":"decided"\n${lineOf(decided(turn('chat-3', 1)))}`;
  await withFixture(async (home) => {
    const damage = `ledgerstore: ${home.path}:11: EOF while parsing an object at line 2 column 0; ${RUNBOOK}\n`;
    expectRun(await ledgerstore(['verify', home.path]), 1, '', damage);
    expectRun(await ledgerstore(['counts', home.path]), 1, '', damage);
    expectRun(await ledgerstore(['outbox', home.path]), 1, '', damage);
    unchanged(home.path, text);
  }, text);
});

test('an unreadable ledger (the path is a directory) exits 1 naming the path', async () => {
  await withHome(async (home) => {
    mkdirSync(home.path);
    for (const args of [
      ['verify', home.path],
      ['counts', home.path],
      ['outbox', home.path],
    ]) {
      const run = await ledgerstore(args);
      assert.is(run.code, 1);
      assert.is(run.stdout, '');
      assert.ok(run.stderr.startsWith(`ledgerstore: ${home.path}: is a directory, not a regular file; `), run.stderr);
      assert.is(run.stderr.split('\n').length, 2, 'one line');
    }
  });
});

test('a missing ledger is refused (exit 1), not read as empty, and is not created', async () => {
  await withHome(async (home) => {
    expectRun(
      await ledgerstore(['counts', home.path]),
      1,
      '',
      `ledgerstore: ${home.path}: no such file; there is no ledger to read\n`,
    );
    assert.not.ok(existsSync(home.path));
  });
});

test('a missing LevelDB ledger (or a folder without one) is refused (exit 1), creating nothing', async () => {
  await withHome(async (home) => {
    const missing = `level:${join(home.dir, 'nolv')}`;
    expectRun(
      await ledgerstore(['counts', missing]),
      1,
      '',
      `ledgerstore: ${missing}: no such folder; there is no ledger to read\n`,
    );
    assert.not.ok(existsSync(join(home.dir, 'nolv')));
    mkdirSync(join(home.dir, 'empty'));
    const empty = `level:${join(home.dir, 'empty')}`;
    expectRun(
      await ledgerstore(['counts', empty]),
      1,
      '',
      `ledgerstore: ${empty}: no ledger in the folder; there is no ledger to read\n`,
    );
    assert.equal(readdirSync(join(home.dir, 'empty')), []);
  });
});

test('verify of a ledger that is not there exits 1 and says so: a typo is not an ok', async () => {
  await withHome(async (home) => {
    mkdirSync(join(home.dir, 'empty'));
    for (const [target, why] of [
      [home.path, 'no such file'],
      [`jsonl:${home.path}`, 'no such file'],
      [`level:${join(home.dir, 'nolv')}`, 'no such folder'],
      [`level:${join(home.dir, 'empty')}`, 'no ledger in the folder'],
    ] as const) {
      expectRun(
        await ledgerstore(['verify', target]),
        1,
        '',
        `ledgerstore: ${target}: ${why}; there is no ledger to verify\n`,
      );
    }
    assert.equal(readdirSync(home.dir), ['empty']);
    assert.equal(readdirSync(join(home.dir, 'empty')), []);
  });
});

// -- a cut-off last line ----------------------------------------------------------------------

test('read-only commands ignore a cut-off last line, say so once, and leave the file as it was', async () => {
  // Cut inside a two-byte character: the reader must work on bytes.
  const whole = Buffer.from(lineOf(decided(turn('chat-1', 9), turnTo('trusted', 'amélie'))));
  const cut = whole.subarray(0, whole.indexOf('é') + 1);
  const text = Buffer.concat([Buffer.from(FIXTURE_TEXT), cut]);
  await withFixture(async (home) => {
    const warning = `ledgerstore: ${home.path}: a last line cut off by a crash (${cut.length} bytes) was ignored; the next writer drops it\n`;
    const runs: [readonly string[], string][] = [
      [['counts', home.path, '--json'], FIXTURE_COUNTS],
      [['outbox', home.path, '--json'], `${FIXTURE_OUTBOX.join('\n')}\n`],
      [['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}', '--json'], '["msg-a1","msg-a2"]\n'],
      [
        ['conclusion', home.path, 'trusted', COFFEE, '--json'],
        '{"item":{"type":"edit","id":"2026-09-28-0001","part":0},"id":"concl-1"}\n',
      ],
    ];
    for (const [args, stdout] of runs) {
      expectRun(await ledgerstore(args), 0, stdout, warning);
      unchanged(home.path, text);
    }
    const run = await ledgerstore(['verify', home.path]);
    assert.is(run.code, 0);
    assert.is(run.stderr, warning);
    assert.ok(run.stdout.startsWith(`${home.path}: ok, 10 records, `), run.stdout);
    unchanged(home.path, text);
  }, text);
});

// -- counts, outbox -------------------------------------------------------------------------

test('counts: --json is one object, keys in order; without, aligned lines', async () => {
  await withFixture(async (home) => {
    expectRun(await ledgerstore(['counts', home.path, '--json']), 0, FIXTURE_COUNTS, '');
    expectRun(await ledgerstore(['--json', 'counts', home.path]), 0, FIXTURE_COUNTS, '');
    expectRun(
      await ledgerstore(['counts', home.path]),
      0,
      'decided  7\nsent     2\nwaiting  3\nfailed   1\nskipped  1\n',
      '',
    );
  });
});

test('outbox: --json gives each waiting item and its action, canonical, in decision order', async () => {
  await withFixture(async (home) => {
    expectRun(await ledgerstore(['outbox', home.path, '--json']), 0, `${FIXTURE_OUTBOX.join('\n')}\n`, '');
  });
});

test('a turn only a bigint holds prints as its digits, never a float, in every read command', async () => {
  await withHome(async (home) => {
    const top = turn('big', 2n ** 64n - 1n);
    const above = turn('big', 2n ** 53n + 1n);
    const noted = { type: 'conclude', workspace: 'fleet', peer: 'kyle', session: 'chat-1', text: 'noted' } as const;
    const text = [decided(top, noted), sent(top, ['h-1']), decided(above)].map(lineOf).join('');
    writeFileSync(home.path, text);
    const topJson = '{"type":"turn","session":"big","turn":18446744073709551615}';
    const aboveJson = '{"type":"turn","session":"big","turn":9007199254740993}';
    const runs: [string[], string][] = [
      [['outbox', home.path, '--json'], `{"item":${aboveJson},"action":${JSON.stringify(turnTo())}}\n`],
      [['outbox', home.path], 'turn 9007199254740993 of session big  -> turn to trusted as kyle\n'],
      [['conclusion', home.path, 'fleet', 'noted', '--json'], `{"item":${topJson},"id":"h-1"}\n`],
      [['conclusion', home.path, 'fleet', 'noted'], 'h-1  (turn 18446744073709551615 of session big)\n'],
      [['sent-ids', home.path, topJson, '--json'], '["h-1"]\n'],
      [['export', home.path], text],
    ];
    for (const [args, stdout] of runs) expectRun(await ledgerstore(args), 0, stdout, '');
    unchanged(home.path, text);
  });
});

test('outbox: without --json, one readable row per waiting item', async () => {
  await withFixture(async (home) => {
    const run = await ledgerstore(['outbox', home.path]);
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
    const rows = run.stdout.split('\n');
    assert.is(rows.pop(), '');
    assert.is(rows.length, 3);
    assert.match(
      rows[0] ?? '',
      /^turn 2 of session chat-2 +-> fleet message \(session chat-2\): "deploy \\"v2\\"\\n done"$/,
    );
    assert.match(rows[1] ?? '', /^turn 5 of session chat-1 +-> turn to trusted as kyle$/);
    assert.match(
      rows[2] ?? '',
      /^part 0 of edit 2026-09-28-0002 +-> unconclude in trusted: "Kyle takes his coffee black."$/,
    );
    // The arrows line up.
    assert.is(new Set(rows.map((row) => row.indexOf('->'))).size, 1);
  });
});

test('outbox: an empty outbox prints nothing', async () => {
  await withFixture(
    async (home) => {
      expectRun(await ledgerstore(['outbox', home.path, '--json']), 0, '', '');
    },
    FIXTURE.slice(0, 3).map(lineOf).join('') +
      lineOf(sent(turn('chat-1', 3))) +
      lineOf(failed(edit('2026-09-28-0001', 0))),
  );
});

test('outbox: a large outbox streams out whole, in order', async () => {
  await withHome(async (home) => {
    manyWaiting(home.path, 20_000);
    const run = await ledgerstore(['outbox', home.path, '--json']);
    assert.is(run.code, 0);
    assert.is(run.stderr, '');
    const rows = run.stdout.split('\n');
    assert.is(rows.pop(), '');
    assert.is(rows.length, 20_000);
    assert.is(
      rows[12_345],
      `{"item":{"type":"turn","session":"chat-45","turn":12345},"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}}`,
    );
  });
});

// -- sent-ids, conclusion ---------------------------------------------------------------------

test('sent-ids: the ids as a JSON array, or null; one a line without --json', async () => {
  await withFixture(async (home) => {
    expectRun(
      await ledgerstore(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}', '--json']),
      0,
      '["msg-a1","msg-a2"]\n',
      '',
    );
    // Any key order serde accepts.
    expectRun(
      await ledgerstore(['sent-ids', '--json', home.path, '{"turn":3, "session":"chat-1", "type":"turn"}']),
      0,
      '["msg-a1","msg-a2"]\n',
      '',
    );
    expectRun(
      await ledgerstore(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3}']),
      0,
      'msg-a1\nmsg-a2\n',
      '',
    );
    for (const waitingFailedSkippedUnknown of [
      '{"type":"turn","session":"chat-1","turn":5}',
      '{"type":"turn","session":"chat-1","turn":4}',
      '{"type":"turn","session":"chat-2","turn":1}',
      '{"type":"edit","id":"nope","part":7}',
    ]) {
      expectRun(await ledgerstore(['sent-ids', home.path, waitingFailedSkippedUnknown, '--json']), 0, 'null\n', '');
    }
    for (const [item, words] of [
      ['{"type":"turn","session":"chat-1","turn":5}', 'turn 5 of session chat-1 has no sent record (it is waiting)'],
      ['{"type":"turn","session":"chat-1","turn":4}', 'turn 4 of session chat-1 has no sent record (it is failed)'],
      ['{"type":"turn","session":"chat-2","turn":1}', 'turn 1 of session chat-2 has no sent record (it is skipped)'],
      ['{"type":"edit","id":"nope","part":7}', 'part 7 of edit nope has no sent record (it was never decided)'],
    ] as const) {
      expectRun(await ledgerstore(['sent-ids', home.path, item]), 0, `${words}\n`, '');
    }
  });
});

test('sent-ids: an item that is not an item is bad input: exit 2 with serde text', async () => {
  await withFixture(async (home) => {
    expectRun(
      await ledgerstore(['sent-ids', home.path, '{"type":"turn","session":"chat-1"}']),
      2,
      '',
      'ledgerstore: the item {"type":"turn","session":"chat-1"}: missing field `turn`\n',
    );
    expectRun(
      await ledgerstore(['sent-ids', home.path, '{"type":"turn","session":"chat-1","turn":3,"x":1}']),
      2,
      '',
      'ledgerstore: the item {"type":"turn","session":"chat-1","turn":3,"x":1}: unknown field `x`, expected `session` or `turn`\n',
    );
    unchanged(home.path, FIXTURE_TEXT);
  });
});

test('conclusion: the conclusion to delete as JSON, or null', async () => {
  await withFixture(async (home) => {
    const found = '{"item":{"type":"edit","id":"2026-09-28-0001","part":0},"id":"concl-1"}\n';
    expectRun(await ledgerstore(['conclusion', home.path, 'trusted', COFFEE, '--json']), 0, found, '');
    expectRun(await ledgerstore(['conclusion', home.path, 'untrusted', COFFEE, '--json']), 0, 'null\n', '');
    expectRun(await ledgerstore(['conclusion', home.path, 'trusted', 'another text', '--json']), 0, 'null\n', '');
    // `--` ends the flags, so that a text may start with a dash.
    expectRun(await ledgerstore(['conclusion', '--json', home.path, 'trusted', '--', '--json']), 0, 'null\n', '');
    const human = await ledgerstore(['conclusion', home.path, 'trusted', COFFEE]);
    assert.is(human.code, 0);
    assert.match(human.stdout, /^concl-1 .*part 0 of edit 2026-09-28-0001/);
  });
});

test('conclusion: a workspace that is not trusted, untrusted or fleet is a usage error', async () => {
  await withFixture(async (home) => {
    const run = await ledgerstore(['conclusion', home.path, 'public', COFFEE, '--json']);
    assert.is(run.code, 2);
    assert.is(run.stdout, '');
    assert.ok(
      run.stderr.startsWith('ledgerstore: the workspace must be one of trusted, untrusted, fleet, not "public"\n'),
      run.stderr,
    );
    assert.match(run.stderr, /usage: ledgerstore conclusion <ledger> <workspace> <text>/);
  });
});

// -- export, and the other backends -----------------------------------------------------------

test('export writes canonical lines, whatever form the file has them in', async () => {
  await withHome(async (home) => {
    const loose =
      '{ "item":{"turn":3,"session":"chat-1","type":"turn"}, "action":{"speaker":"kyle","workspace":"trusted","type":"turn"},"time":"2026-09-28T10:00:00.000Z","type":"decided"}\r\n';
    writeFileSync(home.path, loose);
    expectRun(
      await ledgerstore(['export', home.path]),
      0,
      lineOf(decided(turn('chat-1', 3), turnTo('trusted', 'kyle'))),
      '',
    );
    unchanged(home.path, loose);
  });
});

test('every command takes a ledger as level:<folder>, jsonl:<path> or memory:', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const level = `level:${join(home.dir, 'ledger.level')}`;
    const copied = await ledgerstore(['copy', home.path, level]);
    assert.is(copied.code, 0, copied.stderr);
    assert.match(
      copied.stdout,
      new RegExp(
        `^${literal(level)}: copied 10 records from ${literal(home.path)} in [0-9.]+ s, and read it back: 7 decided \\(sent 2, waiting 3, failed 1, skipped 1\\)\n$`,
      ),
    );
    expectRun(await ledgerstore(['counts', level, '--json']), 0, FIXTURE_COUNTS, '');
    expectRun(await ledgerstore(['counts', `jsonl:${home.path}`, '--json']), 0, FIXTURE_COUNTS, '');
    expectRun(await ledgerstore(['outbox', level, '--json']), 0, FIXTURE_OUTBOX.map((l) => `${l}\n`).join(''), '');
    expectRun(await ledgerstore(['export', level]), 0, FIXTURE_TEXT, '');
    expectRun(await ledgerstore(['counts', 'memory:', '--json']), 0, EMPTY_COUNTS, '');
    const appended = await ledgerstore(['append', level], { input: lineOf(sent(turn('chat-1', 5), ['m-5'])) });
    assert.is(appended.code, 0, appended.stderr);
    expectRun(
      await ledgerstore(['sent-ids', level, '{"type":"turn","session":"chat-1","turn":5}', '--json']),
      0,
      '["m-5"]\n',
      '',
    );
  });
});

test('verify --json: one object, whether the ledger is ok, damaged or not there', async () => {
  await withFixture(async (home) => {
    const ok = await ledgerstore(['verify', home.path, '--json']);
    assert.is(ok.code, 0, ok.stderr);
    const found = JSON.parse(ok.stdout) as { seconds: number };
    assert.type(found.seconds, 'number');
    assert.equal(found, {
      ledger: home.path,
      ok: true,
      records: 10,
      counts: JSON.parse(FIXTURE_COUNTS) as unknown,
      seconds: found.seconds,
    });
    assert.is(ok.stdout.split('\n').length, 2, 'one line');
    writeFileSync(home.path, lineOf(sent(turn('x', 1))));
    const damaged = await ledgerstore(['verify', home.path, '--json']);
    assert.is(damaged.code, 1);
    const message = `${home.path}:1: turn 1 of session x: not waiting to be sent; ${RUNBOOK}`;
    assert.equal(JSON.parse(damaged.stdout), {
      ledger: home.path,
      ok: false,
      error: { code: 'LEDGER_DAMAGED', message },
    });
    assert.is(damaged.stderr, `ledgerstore: ${message}\n`);
    const missing = join(home.dir, 'nope.jsonl');
    const none = await ledgerstore(['verify', missing, '--json']);
    assert.is(none.code, 1);
    assert.equal(JSON.parse(none.stdout), {
      ledger: missing,
      ok: false,
      error: { code: 'LEDGER_BAD_TARGET', message: `${missing}: no such file; there is no ledger to verify` },
    });
  });
});

test.run();
