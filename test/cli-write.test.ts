/**
 * The command line's commands that write or take input (`append`, `check`, `gen`, `copy`), run
 * in process: exit statuses, stdout and stderr exactly, and what is on disk after each.
 */
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { syntheticLines } from '../lib/honcho/synthetic.js';
import { encodeRecord, Ledger } from '../lib/index.js';
import {
  expectRun,
  FIXTURE_COUNTS,
  FIXTURE_TEXT,
  ledgerstore,
  lineOf,
  literal,
  RUNBOOK,
  steppingClock,
  unchanged,
  withFixture,
} from './support/cli.js';
import { decided, failed, sent, skip, turn, turnTo, withHome } from './support/ledger.js';

// -- append -----------------------------------------------------------------------------------

test('append: each line appended in order, canonical, and nothing on stdout', async () => {
  await withHome(async (home) => {
    const first = decided(turn('chat-1', 3), turnTo('trusted', 'kyle'));
    const second = sent(turn('chat-1', 3), ['msg-1']);
    // Keys in another order and whitespace: read as serde reads it, written canonically.
    const loose =
      ' {"item": {"turn": 3, "session": "chat-1", "type": "turn"}, "ids": ["msg-1"], "time": "2026-09-28T10:00:00.000Z", "type": "sent"} ';
    expectRun(
      await ledgerstore(['append', home.path], { input: `${encodeRecord(first)}\n${loose}\n` }),
      0,
      '',
      `appended 2 records to ${home.path}\n`,
    );
    unchanged(home.path, lineOf(first) + lineOf(second));
  });
});

test('append: a last line without its newline is a line; empty input appends nothing', async () => {
  await withHome(async (home) => {
    const record = decided(turn('chat-1', 1));
    expectRun(await ledgerstore(['append', home.path]), 0, '', `appended 0 records to ${home.path}\n`);
    assert.not.ok(existsSync(home.path), 'nothing appended, no file');
    expectRun(
      await ledgerstore(['append', home.path], { input: encodeRecord(record) }),
      0,
      '',
      `appended 1 record to ${home.path}\n`,
    );
    unchanged(home.path, lineOf(record));
  });
});

test('append: a refused record stops it with the error; the ones before it stay', async () => {
  await withFixture(async (home) => {
    const before = decided(turn('chat-7', 1), turnTo('fleet', 'bot'));
    const after = decided(turn('chat-7', 2));
    const input = [before, decided(turn('chat-1', 3)), after].map(lineOf).join('');
    expectRun(
      await ledgerstore(['append', home.path], { input }),
      1,
      '',
      'ledgerstore: turn 3 of session chat-1: decided already\n' +
        'ledgerstore: stopped at stdin:2; the 1 record before it was appended\n',
    );
    unchanged(home.path, FIXTURE_TEXT + lineOf(before));
  });
});

test('append: a line that does not decode stops it, naming the stdin line', async () => {
  await withFixture(async (home) => {
    const first = decided(turn('chat-7', 1));
    const second = decided(turn('chat-7', 2));
    const input = `${lineOf(first)}${lineOf(second)}{"type":"decided"}\n${lineOf(decided(turn('chat-7', 3)))}`;
    expectRun(
      await ledgerstore(['append', home.path], { input }),
      1,
      '',
      'ledgerstore: stdin:3: missing field `time`\n' +
        'ledgerstore: stopped at stdin:3; the 2 records before it were appended\n',
    );
    unchanged(home.path, FIXTURE_TEXT + lineOf(first) + lineOf(second));
  });
});

test('append: stdin is read as bytes: invalid UTF-8 is refused, not replaced', async () => {
  await withHome(async (home) => {
    const text = encodeRecord(decided(turn('chat-1', 1), turnTo('trusted', 'kyle')));
    const at = text.indexOf('kyle');
    const input = Buffer.concat([
      Buffer.from(text.slice(0, at)),
      Buffer.from([0xff]),
      Buffer.from(`${text.slice(at)}\n`),
    ]);
    const run = await ledgerstore(['append', home.path], { input });
    assert.is(run.code, 1);
    assert.is(run.stdout, '');
    assert.match(run.stderr, /^ledgerstore: stdin:1: invalid unicode code point at line 1 column \d+\n/);
    assert.not.ok(existsSync(home.path));
  });
});

test('append: the writer drops a cut-off last line before appending', async () => {
  const tail = '{"type":"sent","time":"2026-09-2';
  await withFixture(async (home) => {
    const record = decided(turn('chat-7', 1));
    const run = await ledgerstore(['append', home.path], { input: lineOf(record) });
    assert.is(run.code, 0);
    assert.match(run.stderr, new RegExp(`a last line cut off by a crash \\(${tail.length} bytes\\) was dropped\\n`));
    unchanged(home.path, FIXTURE_TEXT + lineOf(record));
  }, FIXTURE_TEXT + tail);
});

test('append: a damaged ledger is refused whole and left as it was', async () => {
  const text = `${FIXTURE_TEXT}not json\n`;
  await withFixture(async (home) => {
    const run = await ledgerstore(['append', home.path], { input: lineOf(decided(turn('chat-7', 1))) });
    assert.is(run.code, 1);
    assert.is(run.stdout, '');
    assert.ok(
      run.stderr.startsWith(`ledgerstore: ${home.path}:11: expected ident at line 1 column 2; ${RUNBOOK}\n`),
      run.stderr,
    );
    unchanged(home.path, text);
  }, text);
});

// -- check ------------------------------------------------------------------------------------

test('check: ok with the canonical line, or err with why, each with its line; exit 1 when any is refused', async () => {
  const canonical = encodeRecord(decided(turn('chat-1', 3), turnTo('trusted', 'kyle')));
  const reordered =
    '{ "action":{"speaker":"kyle","workspace":"trusted","type":"turn"},\t"item":{"turn":3,"session":"chat-1","type":"turn"}, "time":"2026-09-28T10:00:00.000Z","type":"decided" }';
  const sequence = '["failed","2026-09-28T10:00:00.000Z",{"type":"edit","id":"e","part":1},404,"gone"]';
  const input = [
    canonical,
    reordered,
    '{"type":"decided"}',
    '',
    sequence,
    '{"type":"sent","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-1","turn":3},"ids":[],"more":1}',
  ].join('\n');
  expectRun(
    await ledgerstore(['check'], { input: `${input}\n` }),
    1,
    [
      `stdin:1: ok ${canonical}`,
      `stdin:2: ok ${canonical}`,
      'stdin:3: err missing field `time`',
      'stdin:4: err EOF while parsing a value at line 2 column 0',
      'stdin:5: ok {"type":"failed","time":"2026-09-28T10:00:00.000Z","item":{"type":"edit","id":"e","part":1},"status":404,"kind":"gone"}',
      'stdin:6: err unknown field `more`, expected one of `time`, `item`, `ids`',
      '',
    ].join('\n'),
    'checked 6 lines: 3 ok, 3 refused\n',
  );
});

test('check: all accepted is exit 0; empty input is no lines', async () => {
  const line = encodeRecord(sent(turn('chat-1', 3), ['a', 'b']));
  expectRun(
    await ledgerstore(['check'], { input: `${line}\n${line}` }),
    0,
    `stdin:1: ok ${line}\nstdin:2: ok ${line}\n`,
    'checked 2 lines: 2 ok, 0 refused\n',
  );
  expectRun(await ledgerstore(['check']), 0, '', 'checked 0 lines: 0 ok, 0 refused\n');
});

test('check --ledger: each line as if appended after the ledger and the lines accepted before it; nothing changes', async () => {
  await withFixture(async (home) => {
    const lines = [
      decided(turn('chat-1', 3), skip('again')), // decided in the ledger already
      sent(turn('chat-1', 5), ['m-5']), // waiting in the ledger: ok
      failed(turn('chat-1', 5)), // sent by the line before: not waiting any more
      decided(turn('chat-9', 1)), // new: ok
      decided(turn('chat-9', 1)), // decided by the line before
      sent(turn('chat-9', 2)), // never decided
    ].map((record) => encodeRecord(record));
    expectRun(
      await ledgerstore(['check', '--ledger', home.path], { input: `${lines.join('\n')}\n{"type":"sent"}\n` }),
      1,
      [
        'stdin:1: err turn 3 of session chat-1: decided already',
        `stdin:2: ok ${lines[1]}`,
        'stdin:3: err turn 5 of session chat-1: not waiting to be sent',
        `stdin:4: ok ${lines[3]}`,
        'stdin:5: err turn 1 of session chat-9: decided already',
        'stdin:6: err turn 2 of session chat-9: not waiting to be sent',
        'stdin:7: err missing field `time`',
        '',
      ].join('\n'),
      'checked 7 lines: 2 ok, 5 refused\n',
    );
    unchanged(home.path, FIXTURE_TEXT);
    // A refused line changes nothing: the same sent goes through once the failed one is gone.
    expectRun(
      await ledgerstore(['check', '--ledger', home.path], { input: `${lines[1]}\n` }),
      0,
      `stdin:1: ok ${lines[1]}\n`,
      'checked 1 line: 1 ok, 0 refused\n',
    );
  });
});

test('check --json: one JSON object a line, with the line, the verdict and the record or the error', async () => {
  await withFixture(async (home) => {
    const ok = encodeRecord(sent(turn('chat-1', 5), ['m-5']));
    const run = await ledgerstore(['check', '--json', '--ledger', home.path], {
      input: `${ok}\n${lineOf(decided(turn('chat-1', 3)))}`,
    });
    assert.is(run.code, 1);
    const verdicts = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    assert.equal(verdicts, [
      { line: 1, ok: true, record: JSON.parse(ok) as unknown },
      { line: 2, ok: false, code: 'LEDGER_ALREADY_DECIDED', error: 'turn 3 of session chat-1: decided already' },
    ]);
  });
});

test('check --ledger of a ledger that is not there, or damaged, says so and checks nothing', async () => {
  await withHome(async (home) => {
    expectRun(
      await ledgerstore(['check', '--ledger', home.path], { input: lineOf(decided(turn('a', 1))) }),
      1,
      '',
      `ledgerstore: ${home.path}: no such file; there is no ledger to check against\n`,
    );
    writeFileSync(home.path, lineOf(sent(turn('a', 1))));
    expectRun(
      await ledgerstore(['check', '--ledger', home.path], { input: lineOf(decided(turn('a', 1))) }),
      1,
      '',
      `ledgerstore: ${home.path}:1: turn 1 of session a: not waiting to be sent; ${RUNBOOK}\n`,
    );
  });
});

// -- gen --------------------------------------------------------------------------------------

test('gen: the same seed gives the same bytes; the ledger opens and verifies', async () => {
  await withHome(async (home) => {
    const a = join(home.dir, 'a.jsonl');
    const b = join(home.dir, 'b.jsonl');
    const c = join(home.dir, 'c.jsonl');
    const run = await ledgerstore(['gen', a, '--records', '3000', '--seed', '7']);
    assert.is(run.code, 0, run.stderr);
    assert.match(run.stdout, /^.*a\.jsonl: wrote 3000 records, \d+ bytes, in \d+\.\d\d s\n$/);
    assert.is((await ledgerstore(['--seed=7', 'gen', '--records=3000', b])).code, 0);
    assert.is((await ledgerstore(['gen', c, '--records', '3000', '--seed', '8'])).code, 0);
    assert.ok(readFileSync(a).equals(readFileSync(b)), 'same seed, same bytes');
    assert.not.ok(readFileSync(a).equals(readFileSync(c)), 'another seed, other bytes');
    assert.is(readFileSync(a, 'utf8').split('\n').length, 3001);

    const verify = await ledgerstore(['verify', a]);
    assert.is(verify.code, 0, verify.stderr);
    assert.ok(verify.stdout.startsWith(`${a}: ok, 3000 records, `), verify.stdout);
    const ledger = await Ledger.open(a, { readOnly: true });
    try {
      assert.equal(JSON.parse((await ledgerstore(['counts', a, '--json'])).stdout), await ledger.counts());
      assert.is(
        (await ledgerstore(['outbox', a, '--json'])).stdout.split('\n').length - 1,
        (await ledger.outbox()).length,
      );
    } finally {
      await ledger.close();
    }
  });
});

test('gen: an existing file is refused, saying gen writes only a new one, and left as it was', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, 'keep me\n');
    const refusal = 'exists already; gen writes only a new file or an empty ledger, never over an existing one';
    // No runbook pointer: nothing is wrong with the disk (the one for I/O failures misled).
    expectRun(
      await ledgerstore(['gen', home.path, '--records', '10']),
      1,
      '',
      `ledgerstore: ${home.path}: ${refusal}\n`,
    );
    expectRun(
      await ledgerstore(['gen', `jsonl:${home.path}`, '--records', '10']),
      1,
      '',
      `ledgerstore: jsonl:${home.path}: ${refusal}\n`,
    );
    unchanged(home.path, 'keep me\n');
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('gen: an empty file is an empty ledger: gen writes it, whole, with the mode it had', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, '', { mode: 0o640 });
    chmodSync(home.path, 0o640);
    const run = await ledgerstore(['gen', home.path, '--records', '300', '--seed', '3']);
    assert.is(run.code, 0, run.stderr);
    assert.is(run.stderr, '');
    assert.is(readFileSync(home.path, 'utf8'), `${[...syntheticLines({ records: 300, seed: 3 })].join('\n')}\n`);
    assert.is(statSync(home.path).mode & 0o777, 0o640);
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('gen: a missing directory is reported with the path given, not the temporary file', async () => {
  await withHome(async (home) => {
    const file = join(home.dir, 'nodir', 'g.jsonl');
    expectRun(
      await ledgerstore(['gen', file, '--records', '3']),
      1,
      '',
      `ledgerstore: ${file}: no such file or directory (ENOENT); see docs/runbook.md#ledger-unwritable\n`,
    );
    assert.equal(readdirSync(home.dir), []);
  });
});

test('gen fills a ledger on any backend, with the same records as the file it would write', async () => {
  await withHome(async (home) => {
    const level = `level:${join(home.dir, 'gen.level')}`;
    const filled = await ledgerstore(['gen', level, '--records', '3000', '--seed', '5']);
    assert.is(filled.code, 0, filled.stderr);
    assert.match(filled.stdout, new RegExp(`^${literal(level)}: wrote 3000 records, in [0-9.]+ s\n$`));
    assert.is((await ledgerstore(['gen', home.path, '--records', '3000', '--seed', '5'])).code, 0);
    expectRun(await ledgerstore(['export', level]), 0, readFileSync(home.path, 'utf8'), '');
    // It names the target as given, and gen, not copy.
    expectRun(
      await ledgerstore(['gen', level, '--records', '10']),
      1,
      '',
      `ledgerstore: ${level}: holds 3000 records already; gen writes only a new file or an empty ledger, never over an existing one\n`,
    );
    expectRun(await ledgerstore(['export', level]), 0, readFileSync(home.path, 'utf8'), '');
  });
});

// -- copy -------------------------------------------------------------------------------------

test('copy, index build and rebuild, and --index refuse a ledger that is not there, and make nothing', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'a', 'b', 'index');
    const target = join(home.dir, 'copy.jsonl');
    const runs: [readonly string[], string][] = [
      [['copy', home.path, target], 'copy'],
      [['copy', home.path, `level:${target}`], 'copy'],
      [['index', 'build', home.path, '--index', index], 'index'],
      [['index', 'rebuild', home.path, '--index', index], 'index'],
      [['counts', home.path, '--index', index], 'read'],
      [['verify', home.path, '--index', index], 'verify'],
    ];
    for (const [args, verb] of runs) {
      expectRun(
        await ledgerstore(args),
        1,
        '',
        `ledgerstore: ${home.path}: no such file; there is no ledger to ${verb}\n`,
      );
      assert.equal(readdirSync(home.dir), [], args.join(' '));
    }
  });
});

test("--index makes the read model's folder, but not a missing parent of it", async () => {
  await withFixture(async (home) => {
    const index = join(home.dir, 'nodir', 'index');
    expectRun(
      await ledgerstore(['counts', home.path, '--index', index]),
      1,
      '',
      `ledgerstore: ${index}: no such file or directory (ENOENT); see docs/runbook.md#ledger-unwritable\n`,
    );
    assert.equal(readdirSync(home.dir), ['honcho.jsonl']);
  });
});

test('copy and index build say they ignored a cut-off last line, and leave the file as it was', async () => {
  const tail = '{"type":"sent","time":"2026-09-2';
  const text = FIXTURE_TEXT + tail;
  await withFixture(async (home) => {
    const warning = `ledgerstore: ${home.path}: a last line cut off by a crash (${tail.length} bytes) was ignored; the next writer drops it\n`;
    const target = join(home.dir, 'copy.jsonl');
    const copied = await ledgerstore(['copy', home.path, target]);
    assert.is(copied.code, 0, copied.stderr);
    assert.is(copied.stderr, warning);
    unchanged(target, FIXTURE_TEXT);
    const index = join(home.dir, 'index');
    const built = await ledgerstore(['index', 'build', home.path, '--index', index]);
    assert.is(built.code, 0, built.stderr);
    assert.is(built.stderr, `ledgerstore: ${index}: built the index of ${home.path} (10 records)\n${warning}`);
    unchanged(home.path, text);
  }, text);
});

test('copy refuses a target that holds records, and a damaged source, and changes neither', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    const target = join(home.dir, 'target.jsonl');
    writeFileSync(target, lineOf(decided(turn('x', 1))));
    expectRun(
      await ledgerstore(['copy', home.path, target]),
      1,
      '',
      `ledgerstore: ${target}: holds 1 record already; a copy goes only to an empty ledger\n`,
    );
    unchanged(target, lineOf(decided(turn('x', 1))));
    const damaged = join(home.dir, 'damaged.jsonl');
    writeFileSync(damaged, lineOf(sent(turn('x', 1))));
    const empty = join(home.dir, 'empty.jsonl');
    expectRun(
      await ledgerstore(['copy', damaged, empty]),
      1,
      '',
      `ledgerstore: ${damaged}:1: turn 1 of session x: not waiting to be sent; ${RUNBOOK}\nledgerstore: copy stopped; ${empty} was not written\n`,
    );
    assert.not.ok(existsSync(empty), 'the target was not even created');
  });
});

test('copy into an empty file, or level: into an empty folder, is a copy into an empty ledger', async () => {
  await withFixture(async (home) => {
    const file = join(home.dir, 'empty.jsonl');
    writeFileSync(file, '');
    assert.is((await ledgerstore(['copy', home.path, file])).code, 0);
    unchanged(file, FIXTURE_TEXT);
    const folder = join(home.dir, 'empty.level');
    mkdirSync(folder);
    assert.is((await ledgerstore(['copy', home.path, `level:${folder}`])).code, 0);
    expectRun(await ledgerstore(['export', `level:${folder}`]), 0, FIXTURE_TEXT, '');
    assert.equal(readdirSync(home.dir).sort(), ['empty.jsonl', 'empty.level', 'honcho.jsonl']);
  });
});

/** A ledger of `n` decided turns, each its own item. */
function decidedTurns(path: string, n: number): void {
  writeFileSync(path, Array.from({ length: n }, (_, i) => lineOf(decided(turn('chat-1', i + 1)))).join(''));
}

test('copy stopped by SIGINT or SIGTERM removes what it built, says so, exits 128+n; the copy can then be made', async () => {
  await withHome(async (home) => {
    decidedTurns(home.path, 30_000);
    for (const [signal, code, to] of [
      ['SIGINT', 130, join(home.dir, 'copy.jsonl')],
      ['SIGTERM', 143, `level:${join(home.dir, 'copy.level')}`],
    ] as const) {
      const signals = new EventEmitter();
      // Sent while the copy is being written: its progress line says so.
      const onStderr = (text: string): void => {
        if (text.includes('copying to') && text.includes(': 10,000 of 30,000 records')) signals.emit(signal, signal);
      };
      const before = readdirSync(home.dir);
      const stopped = await ledgerstore(['copy', home.path, to], {
        tty: true,
        signals,
        onStderr,
        now: steppingClock(),
      });
      assert.is(stopped.code, code, signal);
      assert.ok(
        stopped.stderr.endsWith(
          `ledgerstore: copy stopped by ${signal}; ${to} was not written (what the copy had built beside it is removed)\n`,
        ),
        stopped.stderr,
      );
      assert.equal(readdirSync(home.dir), before, `${signal}: nothing left of the copy`);
      const copied = await ledgerstore(['copy', home.path, to]);
      assert.is(copied.code, 0, copied.stderr);
      assert.match(copied.stdout, /: copied 30000 records from /);
    }
  });
});

/** The id of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid as number;
}

test('copy and gen remove what a build that was killed left beside the target, and say so', async () => {
  await withFixture(async (home) => {
    const file = join(home.dir, 'copy.jsonl');
    const pid = deadPid();
    writeFileSync(`${file}.tmp-${pid}`, FIXTURE_TEXT.slice(0, 100));
    // one of a process that is running (this one) may be a build under way: it stays
    writeFileSync(`${file}.tmp-${process.pid}-not-a-pid`, '');
    const copied = await ledgerstore(['copy', home.path, file]);
    assert.is(copied.code, 0, copied.stderr);
    assert.is(
      copied.stderr,
      `ledgerstore: removed ${file}.tmp-${pid}, left by a gen or copy that did not finish (its process is gone)\n`,
    );
    unchanged(file, FIXTURE_TEXT);
    const folder = join(home.dir, 'gen.level');
    mkdirSync(`${folder}.tmp-${pid}`);
    writeFileSync(join(`${folder}.tmp-${pid}`, 'CURRENT'), 'MANIFEST-000001\n');
    const generated = await ledgerstore(['gen', `level:${folder}`, '--records', '10']);
    assert.is(generated.code, 0, generated.stderr);
    assert.is(
      generated.stderr,
      `ledgerstore: removed ${folder}.tmp-${pid}, left by a gen or copy that did not finish (its process is gone)\n`,
    );
    assert.equal(readdirSync(home.dir).sort(), [
      'copy.jsonl',
      `copy.jsonl.tmp-${process.pid}-not-a-pid`,
      'gen.level',
      'honcho.jsonl',
    ]);
  });
});

test('append: a blank line is skipped, not a stop, and stderr says so', async () => {
  await withHome(async (home) => {
    const records = [decided(turn('chat-1', 1)), decided(turn('chat-1', 2)), decided(turn('chat-1', 3))];
    const [first, second, third] = records.map(lineOf);
    const input = `${first}\n  \r\n${second}\t\n${third}`;
    expectRun(
      await ledgerstore(['append', home.path], { input }),
      0,
      '',
      `ledgerstore: skipped 3 blank lines of stdin (the first at stdin:2)\nappended 3 records to ${home.path}\n`,
    );
    unchanged(home.path, records.map(lineOf).join(''));
    expectRun(
      await ledgerstore(['append', home.path], { input: '\n' }),
      0,
      '',
      `ledgerstore: skipped 1 blank line of stdin (stdin:1)\nappended 0 records to ${home.path}\n`,
    );
  });
});

test('append --json: one object at the end: appended, skipped, and where and why it stopped', async () => {
  await withFixture(async (home) => {
    const first = decided(turn('chat-7', 1));
    const ok = await ledgerstore(['append', home.path, '--json'], { input: `${lineOf(first)}\n` });
    assert.is(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout), { ledger: home.path, appended: 1, skipped: [2] });
    const stopped = await ledgerstore(['append', home.path, '--json'], {
      input: `${lineOf(decided(turn('chat-7', 2)))}${lineOf(first)}`,
    });
    assert.is(stopped.code, 1);
    assert.equal(JSON.parse(stopped.stdout), {
      ledger: home.path,
      appended: 1,
      skipped: [],
      stopped: {
        line: 2,
        error: { code: 'LEDGER_ALREADY_DECIDED', message: 'turn 1 of session chat-7: decided already' },
      },
    });
    assert.is(
      stopped.stderr,
      'ledgerstore: turn 1 of session chat-7: decided already\nledgerstore: stopped at stdin:2; the 1 record before it was appended\n',
    );
  });
});

test('copy --json and gen --json: one object each, once the ledger is written', async () => {
  await withFixture(async (home) => {
    const to = `level:${join(home.dir, 'copy.level')}`;
    const copied = await ledgerstore(['copy', home.path, to, '--json']);
    assert.is(copied.code, 0, copied.stderr);
    const said = JSON.parse(copied.stdout) as { seconds: number };
    assert.equal(said, {
      from: home.path,
      to,
      records: 10,
      counts: JSON.parse(FIXTURE_COUNTS) as unknown,
      seconds: said.seconds,
    });
    const file = join(home.dir, 'gen.jsonl');
    const generated = await ledgerstore(['gen', file, '--records', '100', '--json']);
    assert.is(generated.code, 0, generated.stderr);
    const wrote = JSON.parse(generated.stdout) as { seconds: number };
    assert.equal(wrote, { ledger: file, records: 100, bytes: statSync(file).size, seconds: wrote.seconds });
    const level = `level:${join(home.dir, 'gen.level')}`;
    assert.equal(
      (JSON.parse((await ledgerstore(['gen', level, '--records', '10', '--json'])).stdout) as { bytes: unknown }).bytes,
      null,
    );
  });
});

test.run();
