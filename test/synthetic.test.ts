/**
 * The synthetic workload (lib/honcho/synthetic.ts): deterministic, valid under the rules,
 * memoryd's shape, every kind of record and string in it, and its lines canonical.
 */
import { readFileSync, statSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeJsonlWhole } from '../backends/jsonl-write-whole.js';
import { syntheticLines, type WorkloadOptions, workload } from '../lib/honcho/synthetic.js';
import {
  type Action,
  type Conclusion,
  decodeRecordText,
  encodeRecord,
  isSessionId,
  isTime,
  itemKey,
  Ledger,
  type Record,
  type Turn,
  type Workspace,
} from '../lib/index.js';
import { withHome } from './support/ledger.js';

const RECORDS = 20_000;

function lines(options: WorkloadOptions): string[] {
  return Array.from(workload(options), (record) => encodeRecord(record));
}

/** Writes a ledger of `records` records into a fresh home and hands its path and lines over. */
async function withLedger<T>(
  records: number,
  seed: number,
  body: (file: string, lines: string[]) => Promise<T>,
): Promise<T> {
  return withHome(async (home) => {
    const written = await writeJsonlWhole(home.path, syntheticLines({ records, seed }));
    const text = readFileSync(home.path, 'utf8');
    assert.is(written.records, records);
    assert.is(written.bytes, statSync(home.path).size);
    assert.ok(text === '' || text.endsWith('\n'), 'the file ends with a newline');
    return body(home.path, text === '' ? [] : text.slice(0, -1).split('\n'));
  });
}

test('the same seed gives the same records, another seed others', () => {
  const a = lines({ records: 5000, seed: 42 });
  const b = lines({ records: 5000, seed: 42 });
  const c = lines({ records: 5000, seed: 43 });
  assert.is(a.length, 5000);
  assert.equal(a, b);
  assert.is.not(a.join('\n'), c.join('\n'));
  // A shorter run is a prefix of a longer one: nothing depends on the count asked for.
  assert.equal(lines({ records: 1000, seed: 42 }), a.slice(0, 1000));
  assert.equal(lines({ records: 100 }), lines({ records: 100, seed: 1 }));
  assert.equal(lines({ records: 0 }), []);
});

test('times start at start, never go back, and have the ledger shape', () => {
  const start = new Date('2030-06-15T12:34:56.789Z');
  let last = '';
  let first = true;
  for (const record of workload({ records: RECORDS, seed: 3, start })) {
    assert.ok(isTime(record.time), record.time);
    assert.match(record.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.is(new Date(record.time).toISOString(), record.time);
    if (first) assert.is(record.time, '2030-06-15T12:34:56.789Z');
    else assert.ok(record.time >= last, `${record.time} after ${last}`);
    first = false;
    last = record.time;
  }
  const [head] = workload({ records: 1 });
  assert.is(head?.time, '2026-01-01T00:00:00.000Z');
});

test('the options are checked', () => {
  assert.throws(() => [...workload({ records: -1 })], RangeError);
  assert.throws(() => [...workload({ records: 1.5 })], RangeError);
  assert.throws(() => [...workload({ records: 1, seed: 0.5 })], RangeError);
  assert.throws(() => [...workload({ records: 1, start: new Date(Number.NaN) })], RangeError);
});

test('a generated ledger opens under the rules and its counts add up', async () => {
  await withLedger(RECORDS, 7, async (file, written) => {
    assert.is(written.length, RECORDS);
    const ledger = await Ledger.open(file, { readOnly: true });
    try {
      assert.is(ledger.size, RECORDS);
      assert.is(ledger.repaired, null);
      const counts = await ledger.counts();
      const records = written.map((line) => decodeRecordText(line));
      const of = (type: Record['type']): number => records.filter((r) => r.type === type).length;
      assert.is(counts.decided, of('decided'));
      assert.is(counts.sent, of('sent'));
      assert.is(counts.failed, of('failed'));
      assert.is(counts.decided, counts.sent + counts.waiting + counts.failed + counts.skipped);
      assert.is((await ledger.outbox()).length, counts.waiting);
      // A realistic outbox: something is still waiting, but most of the work was done.
      assert.ok(counts.waiting > 0, 'the outbox is not empty');
      assert.ok(
        counts.waiting < counts.decided / 10,
        `the outbox (${counts.waiting}) is a small part of ${counts.decided}`,
      );
      assert.ok(counts.sent > counts.decided / 2, 'most items were sent');
      assert.ok(counts.failed > 0 && counts.skipped > 0);
    } finally {
      await ledger.close();
    }
  });
});

test('every line is the canonical text of its record, as the workload yields it', async () => {
  await withLedger(RECORDS, 11, async (_file, written) => {
    const expected = lines({ records: RECORDS, seed: 11 });
    assert.is(written.length, expected.length);
    for (let n = 0; n < written.length; n++) {
      const line = written[n] as string;
      assert.is(line, expected[n]);
      assert.is(encodeRecord(decodeRecordText(line)), line, `line ${n + 1} re-encodes to itself`);
    }
  });
});

test("the ledger has memoryd's shape", () => {
  const actions = new Set<Action['type']>();
  const items = new Set<string>();
  const statuses = new Set<number | null>();
  const idCounts = new Map<Action['type'], Set<number>>();
  const decisions = new Map<string, Action>();
  const lastTurn = new Map<string, Turn>();
  const lastPart = new Map<string, number>();
  for (const record of workload({ records: RECORDS, seed: 5 })) {
    const key = itemKey(record.item);
    items.add(record.item.type);
    if (record.type === 'decided') {
      actions.add(record.action.type);
      decisions.set(key, record.action);
      if (record.item.type === 'turn') {
        assert.ok(isSessionId(record.item.session), record.item.session);
        const before = lastTurn.get(record.item.session) ?? 0;
        assert.ok(record.item.turn > before, `turns of ${record.item.session} in increasing order`);
        lastTurn.set(record.item.session, record.item.turn);
      } else {
        assert.match(record.item.id, /^\d{4}-\d{2}-\d{2}-\d{4,}$/);
        assert.is(
          record.item.part,
          (lastPart.get(record.item.id) ?? -1) + 1,
          `parts of ${record.item.id} from 0, in order`,
        );
        lastPart.set(record.item.id, record.item.part);
      }
      if (record.action.type === 'turn') assert.ok(record.action.speaker.length > 0);
      if (record.action.type === 'skip') assert.ok(record.action.why.length > 0);
    } else {
      const action = decisions.get(key);
      assert.ok(action !== undefined && action.type !== 'skip', 'an outcome follows a decision that is not a skip');
      if (record.type === 'failed') {
        statuses.add(record.status);
        assert.ok(record.kind.length > 0);
        if (record.status !== null) assert.is(record.kind, 'http');
      } else {
        const counts = idCounts.get(action.type) ?? new Set<number>();
        counts.add(record.ids.length);
        idCounts.set(action.type, counts);
        for (const id of record.ids) assert.match(id, /^(msg|con)-[A-Za-z0-9_-]{10}$/);
      }
    }
  }
  assert.equal([...actions].sort(), ['conclude', 'fleet', 'retract', 'skip', 'turn', 'unconclude']);
  assert.equal([...items].sort(), ['edit', 'turn']);
  assert.ok(lastTurn.size > 100, `many sessions (${lastTurn.size})`);
  assert.ok(statuses.has(null) && statuses.has(500) && statuses.has(429), 'failures with and without a status');
  assert.equal([...(idCounts.get('conclude') ?? [])], [1], "a conclusion's sent record has exactly one id");
  assert.equal([...(idCounts.get('turn') ?? [])].sort(), [1, 2, 3], "a turn's sent record has 1 to 3 ids");
});

test('strings hold non-ASCII text and every escape JSON needs', () => {
  const text = lines({ records: RECORDS, seed: 9 }).join('\n');
  assert.ok(/[àâçéèêëîïôûùüÿñæœ]/u.test(text), 'accented Latin');
  assert.ok(/\p{Script=Han}/u.test(text), 'Chinese');
  assert.ok(/\p{Extended_Pictographic}/u.test(text), 'emoji (surrogate pairs in UTF-16)');
  for (const sequence of ['\\"', '\\\\', '\\n', '\\t']) assert.ok(text.includes(sequence), `the escape ${sequence}`);
});

test('conclusions are made and undone: conclusion() answers as a replay of the sends does', async () => {
  await withLedger(RECORDS, 13, async (file, written) => {
    // The spec's model: sent Concludes push (item, id) per (workspace, text), sent Unconcludes pop.
    const stackKey = (workspace: Workspace, text: string): string => `${workspace}\n${text}`;
    const decisions = new Map<string, Action>();
    const stacks = new Map<string, Conclusion[]>();
    const pairs = new Map<string, { workspace: Workspace; text: string }>();
    let undone = 0;
    for (const line of written) {
      const record = decodeRecordText(line);
      const key = itemKey(record.item);
      if (record.type === 'decided') {
        decisions.set(key, record.action);
        if (record.action.type === 'unconclude') {
          const { workspace, text } = record.action;
          assert.ok(pairs.has(stackKey(workspace, text)), 'an unconclude undoes a conclusion sent before it');
        }
        continue;
      }
      if (record.type !== 'sent') continue;
      const action = decisions.get(key);
      if (action?.type === 'conclude') {
        const k = stackKey(action.workspace, action.text);
        pairs.set(k, { workspace: action.workspace, text: action.text });
        const stack = stacks.get(k) ?? [];
        stack.push({ item: record.item, id: record.ids[0] as string });
        stacks.set(k, stack);
      } else if (action?.type === 'unconclude') {
        if (stacks.get(stackKey(action.workspace, action.text))?.pop() !== undefined) undone++;
      }
    }
    const ledger = await Ledger.open(file, { readOnly: true });
    try {
      let answered = 0;
      let none = 0;
      for (const [k, { workspace, text }] of pairs) {
        const stack = stacks.get(k) ?? [];
        const expected = stack[stack.length - 1] ?? null;
        assert.equal(await ledger.conclusion(workspace, text), expected);
        if (expected === null) none++;
        else answered++;
      }
      assert.ok(undone > 0, 'some sent conclusions were undone');
      assert.ok(none > 0, 'some (workspace, text) have every conclusion undone');
      assert.ok(answered > 0, 'some (workspace, text) still have a conclusion');
    } finally {
      await ledger.close();
    }
  });
});

test('the lines are the canonical lines of the records, and bad options are refused before any is asked for', () => {
  assert.equal([...syntheticLines({ records: 500, seed: 4 })], lines({ records: 500, seed: 4 }));
  assert.throws(() => syntheticLines({ records: -1 }), RangeError);
});

test.run();
