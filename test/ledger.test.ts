/**
 * The Honcho ledger: the rules, the queries and `append`, as the spec pins them.
 */
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CheckedRecord,
  type Counts,
  type EventLog,
  encodeRecord,
  honchoCodec,
  type Item,
  isLedgerError,
  jsonlBackend,
  Ledger,
  type LogBackend,
  memoryBackend,
  type Record,
} from '../lib/index.js';
import { InjectingIO } from './support/injecting-io.js';
import {
  collect,
  conclude,
  decided,
  edit,
  failed,
  fleet,
  retract,
  sent,
  skip,
  turn,
  turnTo,
  unconclude,
  withHome,
} from './support/ledger.js';

const lines = (path: string): string[] => readFileSync(path, 'utf8').split('\n').slice(0, -1);

/** Opens a ledger in a fresh home, appends `records` one by one, and gives it to `body`. */
async function withLedger(
  records: readonly Record[],
  body: (ledger: Ledger, path: string) => Promise<void> | void,
): Promise<void> {
  await withHome(async (home) => {
    const ledger = await Ledger.open(home.path);
    try {
      for (const record of records) await ledger.append(record);
      await body(ledger, home.path);
    } finally {
      await ledger.close();
    }
  });
}

async function refusedWith(promise: Promise<unknown>, code: string, message: string): Promise<void> {
  try {
    await promise;
    assert.unreachable(`accepted; expected ${message}`);
  } catch (e) {
    assert.ok(isLedgerError(e), String(e));
    assert.is((e as { code: string }).code, code);
    assert.is((e as Error).message, message);
  }
}

test('append writes the record as one line with its newline, nothing else', async () => {
  await withLedger([], async (ledger, path) => {
    const first = decided(turn('chat-1', 3), turnTo('trusted', 'kyle'));
    await ledger.append(first);
    assert.is(readFileSync(path, 'utf8'), `${encodeRecord(first)}\n`);
    await ledger.append(sent(turn('chat-1', 3), ['msg-a1', 'msg-a2']));
    assert.equal(lines(path), [encodeRecord(first), encodeRecord(sent(turn('chat-1', 3), ['msg-a1', 'msg-a2']))]);
  });
});

test('a record is checked once: the ledger hands the log the records as the codec checked them', async () => {
  const inner = memoryBackend({ codec: honchoCodec });
  const told: boolean[] = [];
  const backend: LogBackend<Record> = {
    name: inner.name,
    capabilities: inner.capabilities,
    async open(options) {
      const log = await inner.open(options);
      const append = log.append.bind(log);
      log.append = (records, appendOptions) => {
        told.push(...records.map((record) => CheckedRecord.madeBy(record, honchoCodec)));
        return append(records, appendOptions);
      };
      return log;
    },
  };
  const ledger = await Ledger.open(backend);
  await Promise.all([ledger.append(decided(turn('chat-1', 1))), ledger.append(sent(turn('chat-1', 1)))]);
  assert.equal(await ledger.sentIds(turn('chat-1', 1)), ['msg-1']);
  await ledger.close();
  assert.equal(told, [true, true]);
});

test('a log of the caller’s own, not a LogBase, is handed records, never the checked wrappers', async () => {
  const inner = await memoryBackend({ codec: honchoCodec }).open();
  const seen: string[] = [];
  // a pass-through log written against `append(records: Record[])`, as one before CheckedRecord was
  const own: EventLog<Record> = {
    name: inner.name,
    capabilities: inner.capabilities,
    get head() {
      return inner.head;
    },
    repaired: inner.repaired,
    append: (records: readonly Record[], options) => {
      seen.push(...records.map((record) => record.type));
      return inner.append(records, options);
    },
    read: (from, to) => inner.read(from, to),
    refresh: () => inner.refresh(),
    resumePoint: () => inner.resumePoint(),
    lease: (name) => inner.lease(name),
    close: () => inner.close(),
    [Symbol.asyncDispose]: () => inner.close(),
  };
  const ledger = await Ledger.open({ name: inner.name, capabilities: inner.capabilities, open: async () => own });
  await Promise.all([ledger.append(decided(turn('chat-1', 1))), ledger.append(sent(turn('chat-1', 1)))]);
  assert.equal(seen, ['decided', 'sent']);
  assert.equal(await ledger.sentIds(turn('chat-1', 1)), ['msg-1']);
  await ledger.close();
});

test('a record that is not valid is refused and nothing is written', async () => {
  await withLedger([decided(turn('chat-1', 1))], async (ledger, path) => {
    const before = readFileSync(path);
    const bad = { ...decided(turn('chat-1', 2)), extra: true } as unknown as Record;
    await refusedWith(
      ledger.append(bad),
      'LEDGER_INVALID_RECORD',
      'a ledger record could not be encoded: the record has an unknown field `extra` (expected `type`, `time`, `item`, `action`)',
    );
    await refusedWith(
      ledger.append(decided(turn('chat-1', 2), skip('\ud800'))),
      'LEDGER_INVALID_RECORD',
      "a ledger record could not be encoded: the action's why has a lone surrogate, which UTF-8 cannot hold",
    );
    assert.equal(readFileSync(path), before);
    assert.not.ok(await ledger.isDecided(turn('chat-1', 2)));
  });
});

test('the outbox holds the waiting items, in the order of their decisions', async () => {
  const a = turn('chat-1', 1);
  const b = edit('2026-09-28-0001', 0);
  const c = turn('chat-2', 7);
  const d = turn('chat-1', 2);
  const e = edit('2026-09-28-0001', 1);
  await withLedger(
    [
      decided(c),
      decided(a, skip()),
      decided(b, conclude('trusted', 'x')),
      decided(d),
      decided(e, fleet('f')),
      sent(d),
      failed(e, 500, 'http'),
    ],
    async (ledger) => {
      assert.equal(await ledger.outbox(), [
        { item: c, action: turnTo() },
        { item: b, action: conclude('trusted', 'x') },
      ]);
    },
  );
});

test("a second decision is refused with the spec's text, and nothing is written", async () => {
  await withLedger([decided(turn('chat-1', 3)), decided(edit('2026-09-28-0001', 0), skip())], async (ledger, path) => {
    const before = readFileSync(path);
    await refusedWith(
      ledger.append(decided(turn('chat-1', 3), skip())),
      'LEDGER_ALREADY_DECIDED',
      'turn 3 of session chat-1: decided already',
    );
    await refusedWith(
      ledger.append(decided(edit('2026-09-28-0001', 0))),
      'LEDGER_ALREADY_DECIDED',
      'part 0 of edit 2026-09-28-0001: decided already',
    );
    assert.equal(readFileSync(path), before);
    assert.equal(await ledger.outbox(), [{ item: turn('chat-1', 3), action: turnTo() }]);
  });
});

test('sent or failed is refused before the decision, after an outcome, and for a skip', async () => {
  const undecided = turn('chat-1', 1);
  const done = turn('chat-1', 2);
  const gaveUp = turn('chat-1', 3);
  const skipped = edit('2026-09-28-0001', 0);
  await withLedger(
    [decided(done), sent(done), decided(gaveUp), failed(gaveUp), decided(skipped, skip())],
    async (ledger, path) => {
      const before = readFileSync(path);
      for (const item of [undecided, done, gaveUp]) {
        const name = `turn ${(item as { turn: number }).turn} of session chat-1: not waiting to be sent`;
        await refusedWith(ledger.append(sent(item)), 'LEDGER_NOT_WAITING', name);
        await refusedWith(ledger.append(failed(item)), 'LEDGER_NOT_WAITING', name);
      }
      await refusedWith(
        ledger.append(sent(skipped)),
        'LEDGER_NOT_WAITING',
        'part 0 of edit 2026-09-28-0001: not waiting to be sent',
      );
      await refusedWith(
        ledger.append(failed(skipped)),
        'LEDGER_NOT_WAITING',
        'part 0 of edit 2026-09-28-0001: not waiting to be sent',
      );
      assert.equal(readFileSync(path), before);
      assert.equal(await ledger.counts(), { decided: 3, sent: 1, waiting: 0, failed: 1, skipped: 1 });
    },
  );
});

test('sentIds gives the ids of the sent record, and null for every other item', async () => {
  const s = turn('chat-1', 1);
  const w = turn('chat-1', 2);
  const f = turn('chat-1', 3);
  const k = turn('chat-1', 4);
  await withLedger(
    [decided(s), sent(s, ['msg-a1', 'msg-a2']), decided(w), decided(f), failed(f), decided(k, skip())],
    async (ledger) => {
      assert.equal(await ledger.sentIds(s), ['msg-a1', 'msg-a2']);
      assert.equal(await ledger.sentIds({ type: 'turn', turn: 1, session: 'chat-1' }), ['msg-a1', 'msg-a2']);
      for (const item of [w, f, k, turn('chat-9', 1)]) assert.is(await ledger.sentIds(item), null);
    },
  );
});

test('conclusion: the latest sent conclusion of its workspace and text that is not undone', async () => {
  const c1 = edit('e1', 0);
  const c2 = edit('e2', 0);
  const c3 = edit('e3', 0);
  const u1 = edit('e4', 0);
  const other = edit('e5', 0);
  const unsent = edit('e6', 0);
  const noIds = edit('e7', 0);
  const records = [
    decided(c1, conclude('trusted', 'coffee')),
    decided(c2, conclude('trusted', 'coffee')),
    decided(c3, conclude('trusted', 'coffee')),
    decided(other, conclude('untrusted', 'coffee')),
    decided(unsent, conclude('trusted', 'tea')),
    decided(noIds, conclude('trusted', 'milk')),
    // sent out of decision order: c2 first, then c1
    sent(c2, ['id-2']),
    sent(c1, ['id-1']),
    sent(other, ['id-o']),
    sent(noIds, []),
  ];
  await withLedger(records, async (ledger) => {
    assert.equal(
      await ledger.conclusion('trusted', 'coffee'),
      { item: c1, id: 'id-1' },
      'the latest sent, not the latest decided',
    );
    assert.equal(await ledger.conclusion('untrusted', 'coffee'), { item: other, id: 'id-o' });
    assert.is(await ledger.conclusion('fleet', 'coffee'), null);
    assert.is(await ledger.conclusion('trusted', 'tea'), null, 'decided but not sent');
    assert.is(await ledger.conclusion('trusted', 'milk'), null, 'a sent conclude without ids is ignored');
    await ledger.append(decided(u1, unconclude('trusted', 'coffee')));
    assert.equal(
      await ledger.conclusion('trusted', 'coffee'),
      { item: c1, id: 'id-1' },
      'an unconclude counts once sent',
    );
    await ledger.append(sent(u1, ['u-1']));
    assert.equal(
      await ledger.conclusion('trusted', 'coffee'),
      { item: c2, id: 'id-2' },
      'the undo took the top one off',
    );
    assert.equal(
      await ledger.conclusion('untrusted', 'coffee'),
      { item: other, id: 'id-o' },
      'another workspace is untouched',
    );
    await ledger.append(sent(c3, ['id-3']));
    assert.equal(await ledger.conclusion('trusted', 'coffee'), { item: c3, id: 'id-3' });
    for (const [n, id] of [
      [1, 'u-2'],
      [2, 'u-3'],
      [3, 'u-4'],
    ] as const) {
      await ledger.append(decided(edit('undo', n), unconclude('trusted', 'coffee')));
      await ledger.append(sent(edit('undo', n), [id]));
    }
    assert.is(
      await ledger.conclusion('trusted', 'coffee'),
      null,
      'every one undone, and an undo of an empty stack is harmless',
    );
    await ledger.append(decided(edit('again', 0), conclude('trusted', 'coffee')));
    await ledger.append(sent(edit('again', 0), ['id-9']));
    assert.equal(await ledger.conclusion('trusted', 'coffee'), { item: edit('again', 0), id: 'id-9' });
  });
});

test('the counts add up: decided is the sum of sent, waiting, failed and skipped', async () => {
  const items: Item[] = Array.from({ length: 10 }, (_, n) => turn('chat-1', n));
  const records: Record[] = items.map((item, n) => decided(item, n % 5 === 0 ? skip() : turnTo()));
  records.push(sent(items[1] as Item), sent(items[2] as Item), failed(items[3] as Item), sent(items[4] as Item, []));
  await withLedger(records, async (ledger) => {
    const counts: Counts = await ledger.counts();
    assert.equal(counts, { decided: 10, sent: 3, waiting: 4, failed: 1, skipped: 2 });
    assert.is(counts.decided, counts.sent + counts.waiting + counts.failed + counts.skipped);
    assert.is((await ledger.outbox()).length, counts.waiting);
  });
});

test('decisions gives every decided item with its action, in order, and isDecided counts a skip', async () => {
  const records = [decided(turn('a', 1), skip()), decided(edit('e', 0), retract('t')), decided(turn('a', 0))];
  await withLedger([...records, sent(edit('e', 0))], async (ledger) => {
    assert.equal(
      await collect(ledger.decisions()),
      records.map((r) => ({ item: r.item, action: (r as { action: unknown }).action })),
    );
    assert.ok(await ledger.isDecided(turn('a', 1)));
    assert.ok(await ledger.isDecided({ type: 'edit', part: 0, id: 'e' }));
    assert.not.ok(await ledger.isDecided(turn('a', 2)));
    assert.not.ok(await ledger.isDecided(edit('a', 1)));
  });
});

test('the state holds its own copy: changing a record after append changes nothing', async () => {
  await withLedger([], async (ledger) => {
    const record = {
      type: 'decided',
      time: '2026-09-28T10:00:00.000Z',
      item: { type: 'turn', session: 'chat-1', turn: 1 },
      action: { type: 'turn', workspace: 'trusted', speaker: 'kyle' },
    };
    await ledger.append(record as Record);
    record.item.turn = 2;
    record.action.speaker = 'mallory';
    assert.equal(await ledger.outbox(), [{ item: turn('chat-1', 1), action: turnTo('trusted', 'kyle') }]);
  });
});

test('appends from many un-awaited callers are checked and written in call order', async () => {
  await withLedger([], async (ledger, path) => {
    const calls: { record: Record; outcome: Promise<string> }[] = [];
    const call = (record: Record): void => {
      calls.push({
        record,
        outcome: ledger.append(record).then(
          () => 'ok',
          (e: Error) => e.message,
        ),
      });
    };
    for (let n = 0; n < 300; n++) {
      const item = turn(`s${n % 7}`, n);
      call(decided(item));
      if (n % 3 === 0) call(sent(item, [`m${n}`])); // same item as the call before: must see it
      if (n % 5 === 0) call(decided(item, skip())); // refused: decided already
      if (n % 11 === 0) call(failed(item)); // refused when sent above, else accepted
    }
    const outcomes = await Promise.all(calls.map((c) => c.outcome));
    const written = calls.filter((_, n) => outcomes[n] === 'ok').map((c) => encodeRecord(c.record));
    assert.equal(lines(path), written, 'the file holds the accepted records in call order');
    outcomes.forEach((outcome, n) => {
      const { record } = calls[n] as { record: Record };
      const item = record.item as { turn: number };
      const expected =
        record.type === 'decided' && record.action.type === 'skip'
          ? `turn ${item.turn} of session s${item.turn % 7}: decided already`
          : record.type === 'failed' && item.turn % 3 === 0
            ? `turn ${item.turn} of session s${item.turn % 7}: not waiting to be sent`
            : 'ok';
      assert.is(outcome, expected, `call ${n}`);
    });
    const reopened = await Ledger.open(path, { readOnly: true });
    assert.equal(await reopened.counts(), await ledger.counts());
    assert.equal(await reopened.outbox(), await ledger.outbox());
    await reopened.close();
  });
});

test('appends made together share one write and one sync, a sent with its decided', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    const calls: Promise<unknown>[] = [];
    for (let n = 0; n < 100; n++) {
      calls.push(ledger.append(decided(turn('g', n))));
      calls.push(ledger.append(sent(turn('g', n), [`m${n}`])));
    }
    await Promise.all(calls);
    assert.is(io.count('datasync'), 1, 'one sync for the 200 records');
    assert.is(io.count('write'), 1);
    assert.equal(await ledger.counts(), { decided: 100, sent: 100, waiting: 0, failed: 0, skipped: 0 });
    await ledger.close();
  });
});

test('appenders each awaiting its own appends share every sync: 16 at once, 16 records a sync', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    const appenders = 16;
    const rounds = 20;
    const written: number[] = [];
    // each caller awaits its append before it makes the next, as a daemon's callers do
    const caller = async (a: number): Promise<void> => {
      for (let n = 0; n < rounds; n++) {
        await ledger.append(decided(turn(`a${a}`, n)));
        written.push(io.count('datasync'));
      }
    };
    await Promise.all(Array.from({ length: appenders }, (_, a) => caller(a)));
    // no cohort is split across two writes: each sync carried one append of every caller
    assert.is(io.count('datasync'), rounds, `${rounds} syncs for ${appenders * rounds} records`);
    assert.is(io.count('write'), rounds);
    for (let n = 0; n < rounds; n++)
      assert.equal(written.slice(n * appenders, (n + 1) * appenders), new Array(appenders).fill(n + 1), `round ${n}`);
    assert.is(ledger.size, appenders * rounds);
    await ledger.close();
  });
});

test('a record refused only because of an earlier record of its batch waits for that batch', async () => {
  await withHome(async (home) => {
    const io = new InjectingIO();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io }));
    io.fail('write', 1, 'ENOSPC');
    const first = ledger.append(decided(turn('w', 1)));
    const itsSend = ledger.append(sent(turn('w', 1)));
    const again = ledger.append(decided(turn('w', 1), skip()));
    const outcome = (p: Promise<void>): Promise<string> =>
      p.then(
        () => 'ok',
        (e: { code: string }) => e.code,
      );
    // the first batch fails with its send; the second decision was not refused on its account
    assert.equal(await Promise.all([outcome(first), outcome(itsSend), outcome(again)]), [
      'LEDGER_IO',
      'LEDGER_IO',
      'ok',
    ]);
    assert.equal(await ledger.outbox(), []);
    assert.ok(await ledger.isDecided(turn('w', 1)));
    assert.equal(lines(home.path), [encodeRecord(decided(turn('w', 1), skip()))]);
    await ledger.close();
  });
});

test('reopening gives the same state', async () => {
  const records = [
    decided(turn('chat-1', 1)),
    decided(edit('e', 0), conclude('trusted', 'x')),
    sent(edit('e', 0), ['c-1']),
    decided(turn('chat-1', 2), skip()),
    decided(turn('chat-2', 1)),
    failed(turn('chat-2', 1), 429, 'http'),
  ];
  await withLedger(records, async (ledger, path) => {
    const again = await Ledger.open(path, { readOnly: true });
    assert.equal(await again.counts(), await ledger.counts());
    assert.equal(await again.outbox(), await ledger.outbox());
    assert.equal(await collect(again.decisions()), await collect(ledger.decisions()));
    assert.equal(await again.conclusion('trusted', 'x'), await ledger.conclusion('trusted', 'x'));
    assert.equal(await again.sentIds(edit('e', 0)), ['c-1']);
    assert.is(again.size, records.length);
    const read: Record[] = [];
    for await (const record of again.records()) read.push(record);
    assert.equal(read, records);
    await again.close();
  });
});

test('a closed ledger refuses appends with its code', async () => {
  await withHome(async (home) => {
    const ledger = await Ledger.open(home.path);
    await ledger.close();
    await refusedWith(ledger.append(decided(turn('a', 1))), 'LEDGER_CLOSED', `${home.path}: the ledger is closed`);
  });
});

test('a read-only ledger refuses appends and takes no lock', async () => {
  await withLedger([decided(turn('a', 1))], async (ledger, path) => {
    const reader = await Ledger.open(path, { readOnly: true });
    await refusedWith(
      reader.append(decided(turn('a', 2))),
      'LEDGER_READ_ONLY',
      `${path}: the ledger was opened read-only; open it for writing to append`,
    );
    await reader.close();
    await ledger.append(decided(turn('a', 2)));
    assert.is(lines(path).length, 2);
  });
});

test('a target that names no ledger is refused with its own code, before anything is opened', async () => {
  for (const target of [
    '',
    'level:',
    'jsonl:',
    'memory:x',
    'lvl:foo',
    'file:///tmp/x.jsonl',
    'http://db/x',
    'LevelDB:x',
  ]) {
    const e = await Ledger.open(target).then(
      () => assert.unreachable(`${JSON.stringify(target)} was opened`),
      (error: unknown) => error,
    );
    assert.ok(isLedgerError(e, 'LEDGER_BAD_TARGET'), String(e));
    assert.match(
      (e as Error).message,
      /a ledger is a path, jsonl:<path>, level:<folder>, memory: or postgres:\/\/<user>@<host>\/<db>\?log=<name>$/,
    );
  }
  const scheme = await Ledger.open('lvl:foo').catch((error: unknown) => error);
  assert.match(
    (scheme as Error).message,
    /^"lvl:foo": no ledger has the scheme lvl: \(a file of that name is \.\/lvl:foo\)/,
  );
  for (const target of [42, null, {}]) {
    const e = await Ledger.open(target as unknown as string).catch((error: unknown) => error);
    assert.ok(isLedgerError(e, 'LEDGER_BAD_TARGET'), `${String(target)}: ${String(e)}`);
  }
});

test('an option that is none is refused before anything is opened: a misspelt readOnly never opens a writer', async () => {
  await withHome(async (home) => {
    for (const [options, words] of [
      [{ readonly: true }, /^Ledger\.open: "readonly" is no option \(readOnly\?\); the options are readOnly, index, /],
      [{ frob: 1 }, /^Ledger\.open: "frob" is no option; the options are /],
    ] as const) {
      const e = await Ledger.open(home.path, options as unknown as { readOnly: boolean }).catch(
        (error: unknown) => error,
      );
      assert.ok(isLedgerError(e, 'LEDGER_BAD_ARGUMENT'), String(e));
      assert.match((e as Error).message, words);
    }
    const writer = await Ledger.open(home.path); // no lock was left behind
    await writer.close();
  });
});

test.run();
