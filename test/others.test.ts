/**
 * A ledger's catch-up with other writers and its watch of the log (`lib/honcho/others.ts`), on a
 * log and a state scripted to fail where a test says: what stops the ledger, what is tried again,
 * and how much of a long catch-up is held at once.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CATCH_UP_PAGE, Others } from '../lib/honcho/others.js';
import { Projection } from '../lib/honcho/projection.js';
import {
  type HeadWatcher,
  IndexDamagedError,
  type Item,
  type ItemState,
  type LedgerError,
  LedgerIoError,
  type Position,
  type Record,
  type ResumePoint,
  type Unwatch,
} from '../lib/index.js';
import { until } from './conformance/common.js';
import { decided, rejects, turn } from './support/ledger.js';

/** A log that other writers append to (`records`), whose refreshes and watch starts fail when told to. */
class ScriptedLog {
  readonly records: Record[] = [];
  head: Position = 0;
  /** How many of the next refreshes fail, as a lost connection does. */
  refreshFailures = 0;
  /** How many of the next watch starts fail. */
  watchFailures = 0;
  watchStarts = 0;
  /** The longest run of records one read was asked for. */
  longestRead = 0;

  async refresh(): Promise<Position> {
    if (this.refreshFailures > 0) {
      this.refreshFailures--;
      throw new LedgerIoError('scripted:', new Error('the connection was lost'), 'read');
    }
    this.head = this.records.length;
    return this.head;
  }

  async *read(from: Position = 0, to: Position = this.head): AsyncIterable<Record> {
    this.longestRead = Math.max(this.longestRead, to - from);
    for (let n = from; n < to; n++) yield this.records[n] as Record;
  }

  async watch(watcher: HeadWatcher): Promise<Unwatch> {
    this.watchStarts++;
    if (this.watchFailures > 0) {
      this.watchFailures--;
      throw new LedgerIoError('scripted:', new Error('the watch could not start'), 'read');
    }
    watcher.onHead(this.records.length);
    return async () => undefined;
  }

  async resumePoint(): Promise<ResumePoint> {
    return { position: this.head, cursor: null, fingerprint: '' };
  }
}

/** The state in memory, whose reads fail with `damage` once it is set (a read model found damaged). */
class ScriptedState {
  readonly projection = new Projection();
  damage: LedgerError | null = null;
  reads = 0;

  async statesOf(items: readonly Item[]): Promise<(ItemState | undefined)[]> {
    this.reads++;
    if (this.damage !== null) throw this.damage;
    return items.map((item) => this.projection.stateOf(item));
  }

  async apply(records: readonly Record[]): Promise<void> {
    for (const record of records) this.projection.apply(record);
  }
}

/** `Others` on `log` and `state`, with a flush that makes the catch-ups due, as the ledger's does. */
function catching(log: ScriptedLog, state: ScriptedState) {
  const told: { from: Position; count: number }[] = [];
  const stops: LedgerError[] = [];
  let flushing = false;
  const others: Others = new Others({
    name: 'scripted:',
    log,
    state,
    told: (from, records) => told.push({ from, count: records.length }),
    stopped: (failure) => stops.push(failure),
    kick: () => {
      if (flushing) return;
      flushing = true;
      void Promise.resolve().then(async () => {
        while (others.due()) await others.runDue();
        flushing = false;
      });
    },
  });
  return { others, told, stops };
}

const items = (count: number, from = 0): Record[] =>
  Array.from({ length: count }, (_, n) => decided(turn('others', from + n)));

test('a watch that fails to start while a failed catch-up waits to be tried again is started again all the same', async () => {
  const log = new ScriptedLog();
  const { others } = catching(log, new ScriptedState());
  log.refreshFailures = 1;
  log.watchFailures = 1;
  await rejects(others.ask(), 'LEDGER_IO', 'scripted:: the connection was lost');
  others.listen(); // fails while the catch-up waits for its pause
  await until(() => log.watchStarts === 2, 'the watch to be started again');
  log.records.push(...items(3));
  await others.ask();
  assert.is(others.applied, 3);
  await others.close();
});

test('a read model found damaged during a catch-up stops the ledger: told once, and every later catch-up fails with it', async () => {
  const log = new ScriptedLog();
  const state = new ScriptedState();
  const { others, stops } = catching(log, state);
  log.records.push(...items(2));
  const damage = new IndexDamagedError('index', 'a row does not match its checksum');
  state.damage = damage;
  assert.is(await rejects(others.ask(), 'LEDGER_STOPPED'), damage);
  assert.is(others.failure, damage, 'the ledger stopped with the damage');
  assert.equal(stops, [damage], 'told once');
  const reads = state.reads;
  assert.is(await rejects(others.ask(), 'LEDGER_STOPPED'), damage);
  assert.is(state.reads, reads, 'a stopped ledger reads nothing more');
  assert.is(others.applied, 0, 'nothing was taken in');
  assert.is(others.due(), false, 'no catch-up is due, none is tried again');
  await others.close();
});

test('a long catch-up is taken in a page at a time, each told as it is taken in', async () => {
  const log = new ScriptedLog();
  const { others, told } = catching(log, new ScriptedState());
  const count = 2 * CATCH_UP_PAGE + 5;
  log.records.push(...items(count));
  await others.ask();
  assert.is(others.applied, count);
  assert.ok(log.longestRead <= CATCH_UP_PAGE, `no read asked for more than a page (${log.longestRead})`);
  assert.equal(told, [
    { from: 0, count: CATCH_UP_PAGE },
    { from: CATCH_UP_PAGE, count: CATCH_UP_PAGE },
    { from: 2 * CATCH_UP_PAGE, count: 5 },
  ]);
  await others.close();
});

test('damage in a later page of a catch-up: the pages before it are taken in, nothing of its page is', async () => {
  const log = new ScriptedLog();
  const { others, told } = catching(log, new ScriptedState());
  log.records.push(...items(CATCH_UP_PAGE + 3), decided(turn('others', 1)), ...items(10, CATCH_UP_PAGE + 3));
  const failure = await rejects(others.ask(), 'LEDGER_DAMAGED', new RegExp(`^scripted::${CATCH_UP_PAGE + 4}: `));
  assert.is(others.applied, CATCH_UP_PAGE);
  assert.equal(told, [{ from: 0, count: CATCH_UP_PAGE }]);
  assert.is(others.failure, failure);
  await others.close();
});

test.run();
