/**
 * The LevelDB read model: it answers as a replay in memory does, opens reading only what was
 * appended since its checkpoint, and is rebuilt whenever it cannot be trusted.
 */
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { type DecisionTuple, decisionOf } from '../lib/honcho/read-model/decision-rows.js';
import { workload } from '../lib/honcho/synthetic.js';
import {
  answerDigests,
  backendFor,
  differences,
  encodeRecord,
  IndexDamagedError,
  type Item,
  isLedgerError,
  Ledger,
  type LedgerOptions,
  type LogBackend,
  type Record,
  type Workspace,
} from '../lib/index.js';
import { SCHEMA } from '../lib/projections/layout.js';
import { countingReplays } from './support/counting-backend.js';
import {
  databaseOf,
  liveTablesOf,
  markerOf,
  markerText,
  rowValue,
  sealedRow,
  servingOf,
  withIndexDb,
} from './support/index-db.js';
import { collect, decided, failed, type Home, rejects, sent, skip, turn, withHome } from './support/ledger.js';
import { filesOf, flipBits } from './support/level-db.js';

/** Every answer a ledger gives about `records`' items and conclusions, and its outbox page by page. */
async function answers(ledger: Ledger, records: readonly Record[]): Promise<unknown> {
  const pages: unknown[] = [];
  let page = await ledger.outboxPage(7);
  pages.push(page.decisions);
  while (page.next !== null) {
    page = await ledger.outboxPage(7, page.next);
    pages.push(page.decisions);
  }
  const conclusions = new Map<string, [Workspace, string]>();
  for (const r of records)
    if (r.type === 'decided' && 'workspace' in r.action && 'text' in r.action)
      conclusions.set(`${r.action.workspace}\n${r.action.text}`, [r.action.workspace, r.action.text]);
  return {
    size: ledger.size,
    counts: await ledger.counts(),
    outbox: await ledger.outbox(),
    pages: pages.flat(),
    decisions: await collect(ledger.decisions()),
    decided: await Promise.all(records.map((r) => ledger.isDecided(r.item))),
    sentIds: await Promise.all(records.map((r) => ledger.sentIds(r.item))),
    conclusions: await Promise.all([...conclusions.values()].map(([w, t]) => ledger.conclusion(w, t))),
  };
}

/** What a replay in memory answers for the ledger at `target`. */
async function replayed(target: string | LogBackend<Record>, records: readonly Record[]): Promise<unknown> {
  const ledger = await Ledger.open(target, { readOnly: true });
  try {
    return await answers(ledger, records);
  } finally {
    await ledger.close();
  }
}

async function withIndexed<T>(
  target: LogBackend<Record> | string,
  index: string,
  body: (ledger: Ledger, notices: string[]) => Promise<T>,
  options: LedgerOptions = {},
): Promise<T> {
  const notices: string[] = [];
  const ledger = await Ledger.open(target, { ...options, index, onNotice: (m) => notices.push(m) });
  try {
    return await body(ledger, notices);
  } finally {
    await ledger.close();
  }
}

const generated = [...workload({ records: 6000, seed: 21 })];

/**
 * Appends `records` together, in their order (group commit): a fixture, where the test is not
 * about appends one at a time, in a few fsyncs rather than one each.
 */
const appendAll = async (ledger: Ledger, records: readonly Record[]): Promise<void> => {
  await Promise.all(records.map((record) => ledger.append(record)));
};

test('the read model answers every query as a replay in memory does, appended one by one and at once', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    await withIndexed(home.path, index, async (ledger) => {
      // 300 one by one (each its own batch of the read model, each waiting for its fsync), the
      // other 5,700 at once (group commit: batches of many): both paths, in far fewer fsyncs
      for (const record of generated.slice(0, 300)) await ledger.append(record);
      await appendAll(ledger, generated.slice(300));
      assert.equal(await answers(ledger, generated), await replayed(home.path, generated));
    });
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices, []);
      assert.equal(await answers(ledger, generated), await replayed(home.path, generated));
    });
  });
});

test('a warm open reads only what was appended since the checkpoint', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const { backend, replays } = countingReplays(backendFor(home.path));
    await withIndexed(backend, index, async (ledger) => {
      await appendAll(ledger, generated.slice(0, 2000));
    });
    assert.equal(replays, [], 'nothing to read at the first open of a missing file');
    await withIndexed(backend, index, async () => undefined);
    assert.equal(replays, [], 'a warm open of an up-to-date read model reads no record');
    // another writer, without the read model, appends 500 more
    const plain = await Ledger.open(home.path);
    await appendAll(plain, generated.slice(2000, 2500));
    await plain.close();
    await withIndexed(backend, index, async (ledger, notices) => {
      assert.equal(
        replays,
        Array.from({ length: 500 }, (_, n) => 2000 + n),
        'exactly the 500 new records',
      );
      assert.equal(notices, []);
      assert.equal(
        await answers(ledger, generated.slice(0, 2500)),
        await replayed(home.path, generated.slice(0, 2500)),
      );
    });
  });
});

test('a deleted read model is built again from the log, and says so', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const plain = await Ledger.open(home.path);
    await appendAll(plain, generated.slice(0, 1500));
    await plain.close();
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices, [`${index}: built the index of ${home.path} (1500 records)`]);
      assert.equal(
        await answers(ledger, generated.slice(0, 1500)),
        await replayed(home.path, generated.slice(0, 1500)),
      );
    });
    rmSync(index, { recursive: true });
    await withIndexed(home.path, index, async (ledger) => {
      assert.equal(
        await answers(ledger, generated.slice(0, 1500)),
        await replayed(home.path, generated.slice(0, 1500)),
      );
    });
  });
});

test('a log shorter than the checkpoint, or changed under it, makes a rebuild, said once', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    await withIndexed(home.path, index, async (ledger) => {
      await appendAll(ledger, generated.slice(0, 1000));
    });
    const bytes = readFileSync(home.path);
    const kept = generated.slice(0, 900);
    truncateSync(
      home.path,
      kept.map((r) => Buffer.byteLength(`${encodeRecord(r)}\n`)).reduce((a, b) => a + b, 0),
    );
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.is(notices.length, 1);
      assert.match(
        notices[0] as string,
        new RegExp(`^${index}: rebuilding the index from ${home.path}: ${home.path}: cannot resume at record 1000: `),
      );
      assert.equal(await answers(ledger, kept), await replayed(home.path, kept));
    });
    // the same length, another record before the checkpoint: not the log it indexed
    writeFileSync(home.path, bytes);
    await withIndexed(home.path, index, async () => undefined); // caught up to 1000 again (rebuilt)
    const changed = Buffer.from(bytes);
    const last = changed.lastIndexOf('"time":"') + 8;
    changed.write(changed.toString('latin1', last, last + 4) === '9999' ? '9998' : '9999', last);
    writeFileSync(home.path, changed);
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.match(notices.join('\n'), /rebuilding the index .*the record before it is not the one it was/);
      assert.is(ledger.size, 1000);
    });
  });
});

test("a read model given another ledger's log says whose it was as it rebuilds", async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const other = join(home.dir, 'other.jsonl');
    await withIndexed(home.path, index, async (ledger) => {
      await appendAll(ledger, generated.slice(0, 1000));
    });
    writeFileSync(
      other,
      generated
        .slice(0, 3)
        .map((r) => `${encodeRecord(r)}\n`)
        .join(''),
    );
    await withIndexed(other, index, async (ledger, notices) => {
      assert.is(notices.length, 1);
      assert.match(
        notices[0] as string,
        new RegExp(
          `^${index}: rebuilding the index from ${other}: it was built of ${home.path}, not ${other}; ${other}: cannot resume at record 1000: `,
        ),
      );
      assert.is(ledger.size, 3);
    });
  });
});

test('a read model of another schema version is rebuilt', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    await withIndexed(home.path, index, async (ledger) => {
      await appendAll(ledger, generated.slice(0, 300));
    });
    writeFileSync(join(index, 'LEDGERSTORE'), markerText({ ...markerOf(index), schema: SCHEMA - 1 }));
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices, [
        `${index}: rebuilding the index from ${home.path}: it is of schema version ${SCHEMA - 1}, and this ledgerstore reads version ${SCHEMA}`,
      ]);
      assert.equal(await answers(ledger, generated.slice(0, 300)), await replayed(home.path, generated.slice(0, 300)));
    });
  });
});

test('items rows of version 1 (decisions as maps) are rebuilt as version 2 (decisions as arrays)', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const records = generated.slice(0, 300);
    await withIndexed(home.path, index, async (ledger) => {
      await appendAll(ledger, records);
    });
    // the rows as version 1 wrote them: each decision row an array of [item, action] maps
    const entry = servingOf(index, 'items');
    let rewritten = 0;
    await withIndexDb(index, 'items', async (db, key) => {
      for await (const [rowKey, stored] of db.iterator({ gte: key('rd'), lt: key('re') })) {
        const tuples = rowValue(stored) as DecisionTuple[];
        const maps = tuples.map(decisionOf).map(({ item, action }) => [item, action]);
        await db.put(rowKey, sealedRow(rowKey, maps));
        rewritten++;
      }
      await db.put(key('mversion'), sealedRow(key('mversion'), 1));
    });
    assert.ok(rewritten > 0, 'decision rows were written');
    const marker = markerOf(index);
    const registry = marker['registry'] as { generations: { id: string; version: number }[] };
    for (const g of registry.generations) if (g.id === entry.id) g.version = 1;
    writeFileSync(join(index, 'LEDGERSTORE'), markerText(marker));
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices, [
        `${index}: rebuilding the projection items from ${home.path}: it is of version 1, and this ledgerstore reads version 2`,
      ]);
      assert.equal(await answers(ledger, records), await replayed(home.path, records));
    });
    assert.is(servingOf(index, 'items').version, 2);
    assert.is.not(servingOf(index, 'items').id, entry.id, 'new rows for the new version');
  });
});

test('a build that a crash cut short is started again', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    // 25,000 good records, then a line that breaks a rule: the build in the open (as `index
    // build` runs it) registers its rows before it writes them, and the damage stops it, as a
    // crash would
    const many = [...workload({ records: 25_000, seed: 5 })];
    const bad = decided(many.find((r) => r.type === 'decided')?.item as Item);
    writeFileSync(home.path, [...many, bad].map((r) => `${encodeRecord(r)}\n`).join(''));
    try {
      await Ledger.open(home.path, { index, waitForIndex: true, onNotice: () => undefined });
      assert.unreachable('opened a damaged ledger');
    } catch (e) {
      assert.ok(isLedgerError(e, 'LEDGER_DAMAGED'), String(e));
      assert.match((e as Error).message, /:25001: /);
    }
    writeFileSync(home.path, many.map((r) => `${encodeRecord(r)}\n`).join(''));
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices, [`${index}: rebuilding the index from ${home.path}: an earlier build did not finish`]);
      assert.equal(await answers(ledger, many.slice(0, 3000)), await replayed(home.path, many.slice(0, 3000)));
    });
  });
});

// -- its folder, and damage ----------------------------------------------------------------------

/**
 * A read model whose rows are in a table and in its write-ahead log: 3,000 records appended in
 * one open (whose log the next open folds into a table), 1,000 more in the next. Gives the records.
 */
async function tableAndLog(home: Home, index: string): Promise<Record[]> {
  const records = generated.slice(0, 4000);
  await withIndexed(home.path, index, async (ledger) => {
    await appendAll(ledger, records.slice(0, 3000));
  });
  await withIndexed(home.path, index, async (ledger) => {
    // in batches of 50, so that the log holds many batches and blocks, each with its checkpoint
    for (let n = 3000; n < 4000; n += 50) await appendAll(ledger, records.slice(n, n + 50));
  });
  return records;
}

/**
 * Every rule-breaking record `records` allow (a second \`decided\` of each item, a second outcome of
 * each one sent or failed) is refused, and the ledger answers as a replay in memory does.
 */
async function rulesHold(ledger: Ledger, records: readonly Record[], target: string): Promise<void> {
  for (const record of records) {
    const again: Record = record.type === 'decided' ? record : { ...record, time: '2026-09-29T00:00:00.000Z' };
    try {
      await ledger.append(again);
      assert.unreachable(`accepted a record that breaks the rules: ${encodeRecord(again)}`);
    } catch (e) {
      assert.ok(
        isLedgerError(e, record.type === 'decided' ? 'LEDGER_ALREADY_DECIDED' : 'LEDGER_NOT_WAITING'),
        String(e),
      );
    }
  }
  assert.equal(await answers(ledger, records), await replayed(target, records));
}

test("a folder with other files (the ledger's own) is refused as a read model, not taken over", async () => {
  await withHome(async (home) => {
    const plain = await Ledger.open(home.path);
    await plain.append(decided(turn('r', 1)));
    await plain.close();
    writeFileSync(join(home.dir, 'LOG'), 'a log of something else\n');
    writeFileSync(join(home.dir, '000005.log'), 'not a write-ahead log');
    const before = filesOf(home.dir);
    const e = await rejects(Ledger.open(home.path, { index: home.dir }), 'LEDGER_BAD_TARGET');
    assert.match(
      e.message,
      new RegExp(`^${home.dir}: it holds files that are not a LevelDB database's \\(honcho\\.jsonl\\); `),
    );
    assert.equal(filesOf(home.dir), before);
  });
});

test("a LevelDB ledger's folder is refused as a read model, and a read model's as a ledger, each with that reason", async () => {
  await withHome(async (home) => {
    const log = join(home.dir, 'honcho.level');
    const index = join(home.dir, 'index');
    const ledger = await Ledger.open(`level:${log}`, { index, onNotice: () => undefined });
    await ledger.append(decided(turn('r', 1)));
    await ledger.close();
    const [logFiles, indexFiles] = [filesOf(log), filesOf(index)];
    await rejects(
      Ledger.open(home.path, { index: log }),
      'LEDGER_BAD_TARGET',
      new RegExp(`^${log}: it holds a LevelDB ledger \\(a log\\), not a read model \\(an index\\); `),
    );
    for (const readOnly of [false, true]) {
      await rejects(
        Ledger.open(`level:${index}`, { readOnly }),
        'LEDGER_BAD_TARGET',
        new RegExp(`^${index}: it holds a read model \\(an index\\), not a LevelDB ledger \\(a log\\); `),
      );
    }
    assert.equal([filesOf(log), filesOf(index)], [logFiles, indexFiles]);
  });
});

test('a read model that lost its CURRENT is discarded and built again, with a notice; no rule is broken', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const records = await tableAndLog(home, index);
    rmSync(join(databaseOf(index), 'CURRENT'));
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices.length, 1);
      assert.match(
        notices[0] as string,
        new RegExp(
          `^${index}: rebuilding the index from ${home.path}: the folder holds LevelDB files \\(.+\\) but no CURRENT, .*; it was discarded$`,
        ),
      );
      await rulesHold(ledger, records, home.path);
    });
  });
});

test("a byte flipped in the read model's write-ahead log, with its later batches kept, is a rebuild, not missing rows", async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const records = await tableAndLog(home, index);
    const db = databaseOf(index);
    const wal = readdirSync(db)
      .filter((name) => name.endsWith('.log'))
      .sort()
      .at(-1) as string;
    const bytes = readFileSync(join(db, wal));
    flipBits(bytes, 1000, 0x10); // in the first block: LevelDB would drop the rest of it and keep the checkpoint after
    writeFileSync(join(db, wal), bytes);
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.match(
        notices.join('\n'),
        new RegExp(
          `rebuilding the index from ${home.path}: the write-ahead log ${wal} has bytes that do not read at byte \\d+ .*; it was discarded$`,
        ),
      );
      await rulesHold(ledger, records, home.path);
    });
  });
});

test('a state byte changed in a table of the read model is a rebuild: its blocks are checked against their checksums', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const records = await tableAndLog(home, index);
    const db = databaseOf(index);
    // a skipped item's row, "k": made "w", waiting, as a bit flip would
    const skipped = Buffer.from([0x61, 0x6b]);
    // a live table: one left over by a flush that the last close gave up on is never read
    const table = liveTablesOf(db).find((name) => readFileSync(join(db, name)).includes(skipped)) as string;
    const bytes = readFileSync(join(db, table));
    const at = bytes.indexOf(skipped);
    assert.ok(at > 0, 'a row of a skipped item in the table');
    flipBits(bytes, at + 1, 0x6b ^ 0x77);
    writeFileSync(join(db, table), bytes);
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.is(notices.length, 1, `one notice; the notices: ${JSON.stringify(notices)}`);
      assert.match(
        notices[0] as string,
        new RegExp(
          `^${index}: rebuilding the index from ${home.path}: the table ${table} is damaged: the block at byte \\d+ does not match its checksum; it was discarded$`,
        ),
      );
      await rulesHold(ledger, records, home.path);
    });
  });
});

test('a row that does not match its checksum stops the ledger at the append that reads it; the next open rebuilds', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const item = turn('r', 1);
    await withIndexed(home.path, index, async (ledger) => {
      await ledger.append(decided(item));
      await ledger.append(sent(item));
    });
    const id = servingOf(index, 'items').id;
    // the row says another id now, and keeps the checksum of the one it said
    await withIndexDb(index, 'items', async (db, key) => {
      const row = key('ritr\n1');
      const stored = (await db.get(row)) as Uint8Array;
      const changed = Buffer.from(stored);
      const at = changed.indexOf(Buffer.from('msg-1'));
      flipBits(changed, at + 4, 0x01 ^ 0x02);
      assert.equal(rowValue(changed), ['msg-2']);
      await db.put(row, changed);
    });
    await withIndexed(home.path, index, async (ledger) => {
      // a live consumer ends with the damage that stops the ledger, not at the close
      const waiting = ledger.waitForOutbox().then(
        () => 'resolved',
        (reason: unknown) => reason,
      );
      const e = await rejects(
        ledger.append(sent(item, ['msg-2'])),
        'LEDGER_STOPPED',
        new RegExp(`^${databaseOf(index)}: the read model is damaged \\(a row of ${id} does not match its checksum`),
      );
      assert.instance(e, IndexDamagedError);
      assert.is(await Promise.race([waiting, new Promise((resolve) => setImmediate(() => resolve('waiting')))]), e);
      await rejects(ledger.append(decided(turn('r', 2))), 'LEDGER_STOPPED');
    });
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.match(
        notices.join('\n'),
        new RegExp(`rebuilding the index .*: a row of ${id} does not match its checksum .*; it was discarded$`),
      );
      await rulesHold(ledger, [decided(item), sent(item)], home.path);
    });
  });
});

test('counts that do not add up to the checkpoint are a rebuild', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const records = generated.slice(0, 500);
    await withIndexed(home.path, index, async (ledger) => {
      await appendAll(ledger, records);
    });
    await withIndexDb(index, 'counts', async (db, key) => {
      const row = key('rc');
      const counts = rowValue((await db.get(row)) as Uint8Array) as number[];
      await db.put(row, sealedRow(row, [(counts[0] as number) - 1, ...counts.slice(1)]));
    });
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.match(
        notices.join('\n'),
        /rebuilding the projection counts .*: its counts \(\d+ decided, \d+ sent, \d+ failed\) do not add up to its checkpoint's 500 records$/,
      );
      await rulesHold(ledger, records, home.path);
    });
  });
});

test('a rebuild stopped before it finished is never trusted: the next open discards what is left and builds again', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const records = await tableAndLog(home, index);
    // as a discard of its database leaves it when killed after marking the folder and deleting a manifest
    const db = databaseOf(index);
    writeFileSync(
      join(db, 'LEDGERSTORE'),
      markerText({
        format: 'ledgerstore/read-model',
        schema: SCHEMA,
        discard: 'a rebuild from the log did not finish',
      }),
    );
    rmSync(join(db, readFileSync(join(db, 'CURRENT'), 'utf8').trim()));
    await withIndexed(home.path, index, async (ledger, notices) => {
      assert.equal(notices, [
        `${index}: rebuilding the index from ${home.path}: a rebuild from the log did not finish; it was discarded`,
      ]);
      await rulesHold(ledger, records, home.path);
    });
  });
});

test("verify's digests compare every item's state: a row whose state alone differs from the replay's is told", async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const item = turn('r', 1);
    await withIndexed(home.path, index, async (ledger) => {
      await ledger.append(decided(item));
      await ledger.append(failed(item, 503, 'unavailable'));
    });
    const replay = await Ledger.open(home.path, { readOnly: true });
    const fresh = await answerDigests(replay);
    await replay.close();
    // failed made skipped, written as the layout has it: no other answer changes (no ids, not in the outbox, the same counts)
    await withIndexDb(index, 'items', async (db, key) => {
      await db.put(key('ritr\n1'), sealedRow(key('ritr\n1'), 'k'));
    });
    const indexed = await Ledger.open(home.path, { readOnly: true, index, onNotice: () => undefined });
    assert.is(await indexed.stateOf(item), 'skipped');
    const fromIndex = await answerDigests(indexed);
    await indexed.close();
    assert.equal(differences(fresh, fromIndex), ['the states']);
  });
});

test('rules are checked against the read model, on append and at catch-up', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    await withIndexed(home.path, index, async (ledger) => {
      await ledger.append(decided(turn('r', 1)));
      await ledger.append(decided(turn('r', 2), skip()));
      const refused = async (record: Record): Promise<string> =>
        ledger.append(record).then(
          () => 'ok',
          (e: { code: string }) => e.code,
        );
      assert.is(await refused(decided(turn('r', 1))), 'LEDGER_ALREADY_DECIDED');
      assert.is(await refused(sent(turn('r', 2))), 'LEDGER_NOT_WAITING');
      assert.is(await refused(sent(turn('r', 3))), 'LEDGER_NOT_WAITING');
    });
    // a line appended behind the read model's back that breaks a rule is damage at catch-up
    writeFileSync(home.path, `${readFileSync(home.path, 'utf8')}${encodeRecord(sent(turn('r', 2)))}\n`);
    try {
      await Ledger.open(home.path, { index });
      assert.unreachable('opened');
    } catch (e) {
      assert.ok(isLedgerError(e, 'LEDGER_DAMAGED'));
      assert.match((e as Error).message, /:3: turn 2 of session r: not waiting to be sent/);
    }
  });
});

test('when the read model cannot take in what the log made durable, appends stop, and a reopen catches up', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    await withIndexed(home.path, index, async (ledger) => {
      await ledger.append(decided(turn('s', 1)));
      // the read model's next batch fails, as a full disk would fail it
      const state = (ledger as unknown as { state: { apply: () => Promise<void> } }).state;
      const apply = state.apply;
      state.apply = () => Promise.reject(new Error('ENOSPC: no space left on device'));
      // a live consumer is told of the appended record, then ends with the stop, before any close
      const seen: number[] = [];
      const following = (async () => {
        for await (const { position } of ledger.follow(ledger.size)) seen.push(position);
        return 'ended';
      })().catch((reason: unknown) => reason);
      await ledger.append(decided(turn('s', 2))); // durable in the log: it is appended
      state.apply = apply;
      const stopped = await Promise.race([
        following,
        new Promise((resolve) => setImmediate(() => resolve('following'))),
      ]);
      assert.ok(isLedgerError(stopped, 'LEDGER_STOPPED'), String(stopped));
      assert.equal(seen, [1]);
      const after = await ledger.append(decided(turn('s', 3))).then(
        () => assert.unreachable('the state is behind the log: no append is checked against it'),
        (e: unknown) => e,
      );
      assert.ok(isLedgerError(after, 'LEDGER_STOPPED'), String(after));
      assert.is(
        (after as Error).message,
        `${home.path}: the read model could not take in records the log holds (ENOSPC: no space left on device); they are appended, but every later append is refused until the ledger is reopened, which catches the read model up`,
      );
      assert.is((after as { runbook?: string }).runbook, 'ledger-index-behind');
      const runbook = readFileSync(new URL('../../docs/runbook.md', import.meta.url), 'utf8');
      assert.ok(runbook.includes('\n## ledger-index-behind\n'), 'the runbook has the entry the error points to');
    });
    assert.is(readFileSync(home.path, 'utf8').split('\n').length - 1, 2);
    await withIndexed(home.path, index, async (ledger) => {
      assert.ok(await ledger.isDecided(turn('s', 2)), 'caught up from the log');
      assert.equal(
        await answers(ledger, [decided(turn('s', 1)), decided(turn('s', 2))]),
        await replayed(home.path, [decided(turn('s', 1)), decided(turn('s', 2))]),
      );
      await ledger.append(decided(turn('s', 3)));
    });
  });
});

test('one process at a time: a second open of the read model is refused', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    await withIndexed(home.path, index, async () => {
      const other = join(home.dir, 'other.jsonl');
      try {
        await Ledger.open(other, { index });
        assert.unreachable('opened');
      } catch (e) {
        assert.ok(isLedgerError(e, 'LEDGER_LOCKED'), String(e));
      }
    });
  });
});

test('random appends, reopens and crashes between the log and the read model: it always answers as a replay', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    let state = 0x2545f491;
    const random = (n: number): number => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    let next = 0;
    for (let round = 0; round < 12; round++) {
      const take = generated.slice(next, next + 1 + random(400));
      next += take.length;
      const mode = random(3);
      // 0: appended through the read model; 1: appended without it (as if a crash had lost its
      // batches); 2: appended through it, then the read model's folder is deleted
      const ledger = await Ledger.open(home.path, mode === 1 ? {} : { index, onNotice: () => undefined });
      if (random(2) === 0) for (const record of take) await ledger.append(record);
      else await Promise.all(take.map((record) => ledger.append(record)));
      await ledger.close();
      if (mode === 2) rmSync(index, { recursive: true });
      await withIndexed(home.path, index, async (indexed) => {
        assert.equal(
          await answers(indexed, generated.slice(0, next)),
          await replayed(home.path, generated.slice(0, next)),
          `round ${round}, mode ${mode}`,
        );
      });
    }
  });
});

test('the read model works on every backend', async () => {
  await withHome(async (home) => {
    for (const target of [`level:${join(home.dir, 'ledger.level')}`, 'memory:']) {
      const backend = backendFor(target);
      const index = join(home.dir, `index-${target.slice(0, 5)}`);
      await withIndexed(backend, index, async (ledger) => {
        await Promise.all(generated.slice(0, 2000).map((record) => ledger.append(record)));
      });
      // LevelDB keeps readers out while the ledger is open: compare once it is closed
      const got = await withIndexed(backend, index, async (ledger, notices) => {
        assert.equal(notices, [], target);
        return answers(ledger, generated.slice(0, 2000));
      });
      assert.equal(got, await replayed(backend, generated.slice(0, 2000)), target);
    }
  });
});

test('follow gives the records from a position, then each one appended, in order', async () => {
  await withHome(async (home) => {
    for (const index of [undefined, join(home.dir, 'index')]) {
      const ledger = await Ledger.open(home.path, index === undefined ? {} : { index, onNotice: () => undefined });
      const start = ledger.size;
      await ledger.append(decided(turn(`f${start}`, 1)));
      await ledger.append(decided(turn(`f${start}`, 2)));
      const controller = new AbortController();
      const seen: number[] = [];
      const following = (async () => {
        for await (const { position, record } of ledger.follow(start + 1, controller.signal)) {
          seen.push(position);
          assert.is(encodeRecord(record), encodeRecord(decided(turn(`f${start}`, position - start + 1))));
          if (position === start + 4) controller.abort();
        }
      })();
      await ledger.append(decided(turn(`f${start}`, 3)));
      await Promise.all([ledger.append(decided(turn(`f${start}`, 4))), ledger.append(decided(turn(`f${start}`, 5)))]);
      await following;
      assert.equal(seen, [start + 1, start + 2, start + 3, start + 4]);
      await ledger.close();
    }
  });
});

test('a follower gets every record appended before close, those close was still writing too', async () => {
  await withHome(async (home) => {
    for (const index of [undefined, join(home.dir, 'index')]) {
      const ledger = await Ledger.open(home.path, index === undefined ? {} : { index, onNotice: () => undefined });
      const start = ledger.size;
      const seen: number[] = [];
      const following = (async () => {
        for await (const { position } of ledger.follow(start)) seen.push(position);
      })();
      // more than one batch queued when close is called (a batch takes at most 1,024)
      const appends = Array.from({ length: 3000 }, (_, n) => ledger.append(decided(turn(`c${start}`, n + 1))));
      await ledger.close();
      await Promise.all(appends);
      await following;
      assert.is(
        seen.length,
        3000,
        `the follower${index === undefined ? '' : ' (with a read model)'} saw ${seen.length} of 3000`,
      );
      assert.equal(
        seen,
        Array.from({ length: 3000 }, (_, n) => start + n),
      );
    }
  });
});

test('a read model whose write fails: every queued append settles, and close releases the ledger', async () => {
  await withHome(async (home) => {
    const index = join(home.dir, 'index');
    const ledger = await Ledger.open(home.path, { index, onNotice: () => undefined });
    await ledger.append(decided(turn('e', 0)));
    // the read model's batches fail from now on, as on a full disk
    interface Batch {
      write(sync: boolean): Promise<void>;
    }
    interface Set {
      slots: Map<string, { serving: { db: { batch(): Batch } } }>;
    }
    const db = (ledger as unknown as { state: { set: Set } }).state.set.slots.get('items')?.serving.db;
    assert.ok(db !== undefined, 'the rows of the items projection');
    const batch = db.batch.bind(db);
    db.batch = () =>
      Object.assign(batch(), {
        write: () =>
          Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })),
      });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 1500 }, (_, n) => ledger.append(decided(turn('e', n + 1)))),
    );
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    assert.ok(rejected.length > 0, 'the read model failed: appends after that are refused');
    for (const { reason } of rejected) {
      assert.ok(isLedgerError(reason, 'LEDGER_IO') || isLedgerError(reason, 'LEDGER_STOPPED'), String(reason));
    }
    await ledger.close(); // settles, and lets go of the file and the read model
    const again = await Ledger.open(home.path, { index, onNotice: () => undefined });
    const appended = outcomes.filter((o) => o.status === 'fulfilled').length;
    assert.is(again.size, 1 + appended, 'the log holds every append that resolved, and nothing else');
    assert.ok(await again.isDecided(turn('e', appended)), 'the read model caught up from the log');
    await again.close();
  });
});

test('outboxPage refuses a limit below 1 and a cursor that is not one, with or without a read model', async () => {
  await withHome(async (home) => {
    for (const index of [undefined, join(home.dir, 'index')]) {
      const ledger = await Ledger.open(home.path, index === undefined ? {} : { index, onNotice: () => undefined });
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        await ledger.outboxPage(limit).then(
          () => assert.unreachable(`a limit of ${limit} was taken`),
          (e: unknown) => assert.ok(isLedgerError(e, 'LEDGER_BAD_ARGUMENT'), String(e)),
        );
      }
      for (const after of [-1, 2 ** 48, 0.5]) {
        await ledger.outboxPage(10, after).then(
          () => assert.unreachable(`a cursor of ${after} was taken`),
          (e: unknown) => assert.ok(isLedgerError(e, 'LEDGER_BAD_ARGUMENT'), String(e)),
        );
      }
      await ledger.close();
    }
  });
});

test('waitForOutbox resolves when there is work, and not before', async () => {
  await withHome(async (home) => {
    const ledger = await Ledger.open(home.path, { index: join(home.dir, 'index'), onNotice: () => undefined });
    let woke = false;
    const waiting = ledger.waitForOutbox().then(() => {
      woke = true;
    });
    await ledger.append(decided(turn('w', 1), skip()));
    await new Promise((resolve) => setImmediate(resolve));
    assert.not.ok(woke, 'a skip is no work');
    await ledger.append(decided(turn('w', 2)));
    await waiting;
    assert.ok(woke);
    await ledger.waitForOutbox(); // at once: there is work
    await ledger.append(sent(turn('w', 2)));
    const closing = ledger.waitForOutbox().then(
      () => 'resolved',
      (e: { code: string }) => e.code,
    );
    await ledger.close();
    assert.is(await closing, 'LEDGER_CLOSED');
  });
});

test.run();
