/**
 * The conformance suite: the promises of `lib/log.ts` and the Honcho ledger's answers, which
 * every backend must keep. A backend's test file calls {@link suite} with a factory; a new
 * backend only has to add its factory.
 *
 * ```ts
 * suite({ name: 'jsonl', factory: async () => ({ backend: jsonlBackend(path, ...), cleanup }) });
 * ```
 *
 * Every backend reopens (a backend object opened again gives the same log). Tests that need a
 * capability run only where the manifest (`backend.capabilities`) says the backend has it.
 */
import { suite as uvuSuite } from 'uvu';
import * as assert from 'uvu/assert';
import { workload } from '../../lib/honcho/synthetic.js';
import { Projection } from '../../lib/honcho/projection.js';
import { type EventLog, type Item, Ledger, type LedgerOptions, type LogBackend, type Record, type Workspace, decodeRecord, encodeRecord, isLedgerError } from '../../lib/index.js';
import { decided, edit, sent, skip, turn } from '../support/ledger.js';
import { vectorBytes } from '../support/vectors.js';

/** A backend to test, and how to remove what it made. */
export interface Subject {
  /** Opens the same log every time it is opened (for reopen tests). */
  readonly backend: LogBackend<Record>;
  readonly cleanup: () => Promise<void> | void;
}

export interface SuiteOptions<S extends Subject = Subject> {
  readonly name: string;
  /** A fresh, empty log for each test. */
  readonly factory: () => Promise<S> | S;
  /**
   * Makes the next append to a log of `subject` fail so that the log stops (a failed sync),
   * where the backend can be made to: the guards' order is then pinned with a stopped log too.
   */
  readonly stop?: (subject: S) => void;
}


async function all(log: EventLog<Record>, from?: number): Promise<Record[]> {
  const out: Record[] = [];
  for await (const record of log.read(from)) out.push(record);
  return out;
}

/** The queries memoryd asks, as the Ledger and the bare projection both answer them. */
interface Queries {
  counts(): unknown;
  outbox(): unknown;
  decisions(): Iterable<unknown> | AsyncIterable<unknown>;
  sentIds(item: Item): unknown;
  conclusion(workspace: Workspace, text: string): unknown;
}

/** Every answer about the items and conclusions of `records`. */
async function answers(records: readonly Record[], q: Queries): Promise<unknown> {
  const decisions: unknown[] = [];
  for await (const decision of q.decisions()) decisions.push(decision);
  const sentIds: unknown[] = [];
  const conclusions: unknown[] = [];
  for (const r of records) {
    sentIds.push(await q.sentIds(r.item));
    conclusions.push(r.type === 'decided' && 'workspace' in r.action && 'text' in r.action ? await q.conclusion(r.action.workspace, r.action.text) : null);
  }
  return { counts: await q.counts(), outbox: await q.outbox(), decisions, sentIds, conclusions };
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    assert.ok(isLedgerError(e), `not a ledger error: ${String(e)}`);
    return e.code;
  }
}

/** Runs a body with a fresh subject from `factory`, cleaned up afterwards whatever happens. */
function subjects<S extends Subject>(factory: () => Promise<S> | S): (body: (subject: S) => Promise<void>) => Promise<void> {
  return async (body) => {
    const subject = await factory();
    try {
      await body(subject);
    } finally {
      await subject.cleanup();
    }
  };
}

/** Registers and runs the conformance tests for one backend. */
export function suite<S extends Subject>({ name, factory, stop }: SuiteOptions<S>): void {
  const test = uvuSuite(`conformance: ${name}`);
  const withSubject = subjects(factory);

  const records = Array.from({ length: 20 }, (_, n) => decided(turn(`s${n % 3}`, n), n % 4 === 0 ? skip(`why ${n}`) : undefined));

  test('an empty log has head 0 and reads nothing', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.is(log.head, 0);
      assert.is(log.repaired, null);
      assert.equal(await all(log), []);
      await log.close();
    }));

  test('appends are read back in order, and after a reopen', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.equal(await log.append(records.slice(0, 5)), { from: 0, head: 5 });
      assert.equal(await log.append(records.slice(5)), { from: 5, head: 20 });
      assert.equal(await all(log), records);
      await log.close();
      const seen: [Record, number][] = [];
      const again = await backend.open({
        replay: (record, position) => {
          seen.push([record, position]);
        },
      });
      assert.is(again.head, 20);
      assert.equal(seen, records.map((r, n) => [r, n]));
      assert.equal(await all(again), records);
      await again.close();
    }));

  test('an open resumed at a point replays only the records after it, and reads all', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      assert.equal(await log.resumePoint(), { position: 0, cursor: null, fingerprint: '' });
      await log.append(records.slice(0, 8));
      const point = await log.resumePoint();
      assert.is(point.position, 8);
      assert.match(point.fingerprint, /^[0-9a-f]{64}$/);
      await log.append(records.slice(8));
      await log.close();
      const seen: number[] = [];
      const again = await backend.open({
        resume: point,
        replay: async (record, position) => {
          await Promise.resolve();
          assert.equal(record, records[position]);
          seen.push(position);
        },
      });
      assert.equal(seen, records.map((_, n) => n).slice(8), 'replayed from the point on, in order, each awaited');
      assert.is(again.head, records.length);
      assert.equal(await all(again), records);
      assert.equal(await all(again, 17), records.slice(17));
      const head = await again.resumePoint();
      await again.append([decided(turn('after', 1))]);
      await again.close();
      const third = await backend.open({ resume: head, replay: (_, position) => void seen.push(position) });
      assert.equal(seen.slice(-1), [records.length]);
      assert.is(third.head, records.length + 1);
      await third.close();
    }));

  test('an open resumed at a point the log does not hold fails, and changes nothing', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(records.slice(0, 5));
      const point = await log.resumePoint();
      await log.close();
      const mismatches = [
        { ...point, position: 50 },
        { ...point, fingerprint: '0'.repeat(64) },
      ];
      for (const resume of mismatches) assert.is(await code(backend.open({ resume })), 'LEDGER_RESUME_MISMATCH');
      const again = await backend.open({ resume: point });
      assert.is(again.head, 5);
      await again.append(records.slice(5, 6));
      await again.close();
    }));

  test('reading from a position gives the records from there', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(records);
      for (const from of [0, 1, 7, 19, 20, 25]) assert.equal(await all(log, from), records.slice(from), `from ${from}`);
      await log.close();
    }));

  test('a refused batch writes nothing', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(records.slice(0, 3));
      const bad = [records[3] as Record, { ...(records[4] as Record), time: 'now' } as Record];
      assert.is(await code(log.append(bad)), 'LEDGER_INVALID_RECORD');
      assert.is(log.head, 3);
      assert.equal(await all(log), records.slice(0, 3));
      await log.close();
    }));

  test('an append that expects another head is a conflict and writes nothing', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.append(records.slice(0, 2), { expectedHead: 0 });
      assert.is(await code(log.append(records.slice(2, 3), { expectedHead: 1 })), 'LEDGER_CONFLICT');
      assert.is(await code(log.append(records.slice(2, 3), { expectedHead: 3 })), 'LEDGER_CONFLICT');
      assert.is(log.head, 2);
      assert.equal(await log.append(records.slice(2, 3), { expectedHead: 2 }), { from: 2, head: 3 });
      await log.close();
    }));

  test('concurrent appends are applied in call order', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      const results = await Promise.all(records.map((record) => log.append([record])));
      assert.equal(results.map((r) => r.from), records.map((_, n) => n));
      assert.equal(await all(log), records);
      await log.close();
    }));

  test('a closed log refuses with its code', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      await log.close();
      assert.is(await code(log.append(records.slice(0, 1))), 'LEDGER_CLOSED');
      assert.is(await code(all(log)), 'LEDGER_CLOSED');
      assert.is(await code(log.resumePoint()), 'LEDGER_CLOSED');
      await log.close();
    }));

  // The guards, in one order (lib/log-base.ts): closed, read-only, stopped, the records, the
  // expected head, the empty batch. Each append below breaks every guard after the one it is
  // refused by.
  const invalid = { ...(records[0] as Record), time: 'now' } as Record;

  test('the guards refuse in one order: closed, read-only, the records, the expected head, then an empty batch resolves', () =>
    withSubject(async ({ backend }) => {
      const writer = await backend.open();
      await writer.append(records.slice(0, 1));
      assert.is(await code(writer.append([invalid], { expectedHead: 7 })), 'LEDGER_INVALID_RECORD');
      assert.is(await code(writer.append([], { expectedHead: 7 })), 'LEDGER_CONFLICT');
      assert.equal(await writer.append([], { expectedHead: 1 }), { from: 1, head: 1 });
      await writer.close();
      const reader = await backend.open({ readOnly: true });
      assert.is(await code(reader.append([invalid], { expectedHead: 7 })), 'LEDGER_READ_ONLY');
      assert.is(await code(reader.append([])), 'LEDGER_READ_ONLY');
      await reader.close();
      assert.is(await code(reader.append([invalid], { expectedHead: 7 })), 'LEDGER_CLOSED');
      assert.is(await code(writer.append([invalid], { expectedHead: 7 })), 'LEDGER_CLOSED');
    }));

  if (stop !== undefined) {
    test('the guards on a stopped log: an invalid record, a wrong head, an empty batch are LEDGER_STOPPED; closed comes first', () =>
      withSubject(async (subject) => {
        const log = await subject.backend.open();
        await log.append(records.slice(0, 1));
        stop(subject);
        assert.ok((await code(log.append(records.slice(1, 2)))) !== 'ok', 'the append meant to stop the log failed');
        assert.is(await code(log.append([invalid], { expectedHead: 7 })), 'LEDGER_STOPPED');
        assert.is(await code(log.append(records.slice(1, 2), { expectedHead: 7 })), 'LEDGER_STOPPED');
        assert.is(await code(log.append([])), 'LEDGER_STOPPED');
        await log.close();
        assert.is(await code(log.append([invalid])), 'LEDGER_CLOSED');
      }));
  }

  test('a read-only open refuses appends', () =>
    withSubject(async ({ backend }) => {
      const writer = await backend.open();
      await writer.append(records.slice(0, 1));
      await writer.close();
      const reader = await backend.open({ readOnly: true });
      assert.is(await code(reader.append(records.slice(1, 2))), 'LEDGER_READ_ONLY');
      await reader.close();
    }));

  test('a second writer is refused while the first holds the log; a reader where it can', () =>
    withSubject(async ({ backend }) => {
      if (backend.capabilities.severalWriters) return;
      const first = await backend.open();
      assert.is(await code(backend.open()), 'LEDGER_LOCKED');
      const reading = backend.open({ readOnly: true });
      if (backend.capabilities.readsWhileWriting) await (await reading).close();
      else assert.is(await code(reading), 'LEDGER_LOCKED');
      await first.close();
      const second = await backend.open();
      await second.close();
    }));

  test('Unicode and every escape class of the canonical vectors round-trip', () =>
    withSubject(async ({ backend }) => {
      const bytes = vectorBytes();
      const vectors: Record[] = [];
      for (let start = 0; start < bytes.length; ) {
        const end = bytes.indexOf(10, start);
        vectors.push(decodeRecord(bytes, start, end));
        start = end + 1;
      }
      const log = await backend.open();
      await log.append(vectors);
      await log.close();
      const again = await backend.open({ readOnly: true });
      const lines = (await all(again)).map((record) => `${encodeRecord(record)}\n`).join('');
      assert.is(lines, bytes.toString('utf8'));
      await again.close();
    }));

  test('a large batch is one append', () =>
    withSubject(async ({ backend }) => {
      const log = await backend.open();
      const many = Array.from({ length: 20_000 }, (_, n) => decided(edit(`e${n >> 4}`, n & 15), skip('x'.repeat(n % 50))));
      assert.equal(await log.append(many), { from: 0, head: 20_000 });
      assert.equal(await all(log, 19_990), many.slice(19_990));
      await log.close();
    }));

  test.run();
  ledgerSuite({ name, factory });
}

/**
 * The part of the suite about the Honcho ledger on a backend: its rules and its answers. Run by
 * {@link suite} for every backend, and on its own with ledger options (a read model, say).
 */
export function ledgerSuite<S extends Subject>({ name, factory, options }: SuiteOptions<S> & { readonly options?: () => LedgerOptions }): void {
  const test = uvuSuite(`conformance, the ledger: ${name}`);
  const withSubject = subjects(factory);

  test('the ledger refuses what breaks the rules, on this backend as on any', () =>
    withSubject(async ({ backend }) => {
      const ledger = await Ledger.open(backend, { ...options?.() });
      await ledger.append(decided(turn('a', 1)));
      assert.is(await code(ledger.append(decided(turn('a', 1)))), 'LEDGER_ALREADY_DECIDED');
      assert.is(await code(ledger.append(sent(turn('a', 2)))), 'LEDGER_NOT_WAITING');
      await ledger.append(sent(turn('a', 1)));
      assert.is(await code(ledger.append(sent(turn('a', 1)))), 'LEDGER_NOT_WAITING');
      assert.is(ledger.size, 2);
      await ledger.close();
    }));

  test('the ledger answers every query as a replay in memory does, for a workload of thousands of records', () =>
    withSubject(async ({ backend }) => {
      const generated = [...workload({ records: 5000, seed: 11 })];
      const reference = new Projection();
      for (const record of generated) reference.apply(record);
      const expected = await answers(generated, {
        counts: () => reference.counts(),
        outbox: () => reference.outbox(),
        decisions: () => reference.decisions(),
        sentIds: (item) => reference.sentIds(item),
        conclusion: (workspace, text) => reference.conclusion(workspace, text),
      });
      const ledger = await Ledger.open(backend, { ...options?.() });
      // half one by one, half at once, so that group commit takes part
      for (const record of generated.slice(0, 2500)) await ledger.append(record);
      await Promise.all(generated.slice(2500).map((record) => ledger.append(record)));
      assert.equal(await answers(generated, ledger), expected);
      await ledger.close();
      const again = await Ledger.open(backend, { ...options?.(), readOnly: true });
      assert.equal(await answers(generated, again), expected);
      const read: Record[] = [];
      for await (const record of again.records()) read.push(record);
      assert.equal(read, generated);
      await again.close();
    }));

  test.run();
}
