/**
 * A ledger's live consumers (`lib/honcho/live.ts`): where `follow()` starts, when it stops, and
 * what a consumer that falls behind costs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Live, type LogEntry } from '../lib/honcho/live.js';
import { isLedgerError, Ledger, type Position, type Record } from '../lib/index.js';
import { decided, turn } from './support/ledger.js';

const records = (count: number, from = 0): Record[] =>
  Array.from({ length: count }, (_, n) => decided(turn('live', from + n)));

test('follow() refuses a from that is no position, as it is iterated', async () => {
  const ledger = await Ledger.open('memory:');
  await ledger.append(decided(turn('live', 0)));
  const refusal = async (from: number): Promise<unknown> => {
    try {
      for await (const entry of ledger.follow(from)) return `gave ${JSON.stringify(entry)}`;
    } catch (e) {
      return e;
    }
    return 'gave nothing';
  };
  for (const from of [-2, 1.5, Number.NaN]) {
    const refused = await refusal(from);
    assert.ok(isLedgerError(refused, 'LEDGER_BAD_ARGUMENT'), String(refused));
    assert.match((refused as Error).message, `not ${from}`);
  }
  await ledger.close();
});

test('follow() stops in its backlog as soon as its signal aborts, not at the backlog’s end', async () => {
  const ledger = await Ledger.open('memory:');
  await Promise.all(records(50).map((r) => ledger.append(r)));
  const stop = new AbortController();
  const seen: Position[] = [];
  for await (const { position } of ledger.follow(0, stop.signal)) {
    seen.push(position);
    if (position === 2) stop.abort();
  }
  assert.equal(seen, [0, 1, 2]);
  await ledger.close();
});

/** A ledger's log and state in an array, as `Live` asks for them, counting what is read from it. */
class ArraySource {
  readonly log: Record[] = [];
  /** Each read: from where, and to where. */
  readonly reads: [Position, Position][] = [];

  async *read(from: Position, to: Position): AsyncIterable<Record> {
    this.reads.push([from, to]);
    for (let n = from; n < to; n++) yield this.log[n] as Record;
  }
  applied = (): Position => this.log.length;
  readonly name = 'array:';
  counts = (): never => assert.unreachable('no counts asked for') as never;
  closed = (): boolean => false;
  failure = (): null => null;
  listen = (): void => undefined;
}

test('a consumer that falls behind by more than the queue holds reads the rest from the log: every record, in order, once', async () => {
  const source = new ArraySource();
  const live = new Live(source, 5);
  /** Appends `count` records and tells the consumers, as a ledger does once they are in the state. */
  const append = (count: number): void => {
    const from = source.log.length;
    const added = records(count, from);
    source.log.push(...added);
    live.tell(from, added);
  };
  append(1);
  const followed = live.follow(0)[Symbol.asyncIterator]();
  const first = await followed.next();
  assert.equal(first.value, { position: 0, record: source.log[0] });
  // the consumer works on record 0 while 12 more are taken in, 3 at a time: more than 5 wait
  for (let n = 0; n < 4; n++) append(3);
  const got: LogEntry[] = [];
  while (got.length < 12) {
    const { value } = await followed.next();
    got.push(value as LogEntry);
  }
  assert.equal(
    got.map((e) => e.position),
    Array.from({ length: 12 }, (_, n) => n + 1),
  );
  assert.equal(
    got.map((e) => e.record),
    source.log.slice(1),
  );
  assert.equal(source.reads, [
    [0, 1],
    [1, 13],
  ]);
  // caught up: the next records come from the queue again
  append(2);
  assert.equal((await followed.next()).value, { position: 13, record: source.log[13] });
  assert.equal((await followed.next()).value, { position: 14, record: source.log[14] });
  assert.is(source.reads.length, 2, 'read from the log only when it fell behind');
  live.end();
  assert.is((await followed.next()).done, true);
});

test.run();
