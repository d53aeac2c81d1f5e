/**
 * The promise of a read model after any attack (a kill, damage, a power loss), shared by the
 * LevelDB harnesses of `test/crash/`: opened with the read model, the ledger answers as a fresh
 * replay of the log does (every digest `verify --index` takes, the state of every item
 * included), and refuses every record that breaks the rules that it is offered; so the log is
 * never changed by them. A read model that cannot be trusted may be rebuilt on the way, and is
 * said to be (`onNotice`).
 */
import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import {
  type AnswerDigests,
  answerDigests,
  differences,
  encodeRecord,
  isLedgerError,
  Ledger,
  type Record,
} from '../../lib/index.js';

/** How the open took the read model: caught it up, rebuilt or built it, or refused it (only when asked to allow that). */
export type IndexOutcome = 'caught up' | 'rebuilt' | 'built' | 'refused';

/** A ledger's answers, digested, from a fresh replay of the log in memory. */
export async function replayDigests(log: string): Promise<AnswerDigests> {
  const ledger = await Ledger.open(log, { readOnly: true });
  try {
    return await answerDigests(ledger);
  } finally {
    await ledger.close();
  }
}

/**
 * Records that break the rules, made from `records` (a log's): a second `decided` of an item, a
 * second outcome of one sent or failed; about `count` of them, spread over the log, the last
 * ones (what a lost write would hold) all included.
 */
export function ruleBreakers(records: readonly Record[], count = 150): Record[] {
  const step = Math.max(1, Math.floor(records.length / count));
  const chosen = records.filter((_, n) => n % step === 0 || n >= records.length - 50);
  return chosen.map((record) => (record.type === 'decided' ? record : { ...record, time: '2026-12-31T00:00:00.000Z' }));
}

/**
 * Opens `log` with the read model in `index` and checks the promise: the answers are
 * `expected`'s (a fresh replay's), every record of `breakers` is refused by the rules, and the
 * log's bytes are as they were. Gives how the open took the read model. With `refusable`, the
 * open may refuse the folder as damaged or not a read model's (the caller checks that it was
 * left as it was).
 */
export async function checkIndexPromise(
  log: string,
  index: string,
  breakers: readonly Record[],
  expected: AnswerDigests,
  context: string,
  refusable = false,
): Promise<IndexOutcome> {
  const before = readFileSync(log);
  const notices: string[] = [];
  let ledger: Ledger;
  try {
    ledger = await Ledger.open(log, { index, onNotice: (message) => notices.push(message) });
  } catch (e) {
    if (
      refusable &&
      (isLedgerError(e, 'LEDGER_DAMAGED') || isLedgerError(e, 'LEDGER_BAD_TARGET')) &&
      e.message.startsWith(index)
    )
      return 'refused';
    return assert.unreachable(`${context}: the ledger did not open with its read model: ${String(e)}`) as never;
  }
  try {
    const differ = differences(expected, await answerDigests(ledger));
    assert.equal(
      differ,
      [],
      `${context}: the read model does not answer as a replay (${differ.join(', ')}); notices: ${notices.join(' | ')}`,
    );
    for (const record of breakers) {
      const outcome = await ledger.append(record).then(
        () => 'accepted',
        (e: unknown) =>
          isLedgerError(e, 'LEDGER_ALREADY_DECIDED') || isLedgerError(e, 'LEDGER_NOT_WAITING') ? 'refused' : String(e),
      );
      assert.is(
        outcome,
        'refused',
        `${context}: a record that breaks the rules was ${outcome}: ${encodeRecord(record)}`,
      );
    }
  } finally {
    await ledger.close();
  }
  assert.ok(readFileSync(log).equals(before), `${context}: the log was changed`);
  assert.ok(notices.length <= 1, `${context}: more than one notice: ${notices.join(' | ')}`);
  const [notice] = notices;
  if (notice === undefined) return 'caught up';
  return notice.includes(': rebuilding the index from ') ? 'rebuilt' : 'built';
}
