/**
 * The checks of issue 5's promises, shared by the crash harnesses (test/crash/): given what a
 * writer attempted (its records in call order) and what it was told had landed (the acknowledged
 * ones), and what a reopen found, each function asserts one promise and says, on failure, which
 * record broke it and under which seed (`context`).
 *
 * 1. An append whose promise resolved is present after any crash and reopen.
 * 2. An append that was refused or failed is absent, or (after a crash) the log reopens with it
 *    either whole or cut off, never as a half record taken for whole.
 * 3. A reopen after any crash succeeds, dropping at most a cut-off tail.
 * 4. The rules hold across crashes: no item is decided twice, no outcome recorded twice.
 *
 * Everything here is independent of the engine's own code for the same job: the rules are
 * re-stated (`reference-ledger.ts`, which also works out what opening a file must give from its
 * bytes alone), and lines are compared as bytes against `encodeRecord`'s canonical text.
 */
import * as assert from 'uvu/assert';
import { encodeItem } from '../../lib/honcho/codec.js';
import { encodeRecord, type Ledger, type Record, type Repair } from '../../lib/index.js';
import { ReferenceLedger } from './reference-ledger.js';

/** A record's canonical line, with its newline. */
export const lineOf = (record: Record): string => `${encodeRecord(record)}\n`;

/** The canonical bytes of a JSONL file holding exactly `records`. */
export const fileOf = (records: readonly Record[]): Buffer => Buffer.from(records.map(lineOf).join(''), 'utf8');

/** Promise 4: `records`, in order, keep the rules. Gives the reference they build. */
export function checkRules(records: readonly Record[], context: string): ReferenceLedger {
  const reference = new ReferenceLedger();
  records.forEach((record, n) => {
    const refused = reference.offer(record);
    assert.ok(refused === null, `${context}: promise 4 broken at record ${n + 1}: ${refused?.message}`);
  });
  return reference;
}

/** The ledger answers as a fresh replay of `records` does: size, counts, outbox, decisions. */
export async function checkLedgerState(ledger: Ledger, records: readonly Record[], context: string): Promise<void> {
  const reference = checkRules(records, context);
  assert.is(ledger.size, records.length, `${context}: the ledger's size`);
  assert.equal(await ledger.counts(), reference.counts(), `${context}: the ledger's counts against a replay`);
  assert.equal(
    (await ledger.outbox()).map((d) => d.item),
    reference.outbox().map((d) => d.item),
    `${context}: the ledger's outbox against a replay`,
  );
  let decided = 0;
  for await (const decision of ledger.decisions()) {
    assert.ok(
      reference.isDecided(decision.item),
      `${context}: the ledger believes ${encodeItem(decision.item)} decided; no record says so`,
    );
    decided++;
  }
  assert.is(decided, reference.counts().decided, `${context}: the ledger's decisions`);
}

/** Every record of an open ledger, in order. */
export async function recordsOf(ledger: Ledger): Promise<Record[]> {
  const out: Record[] = [];
  for await (const record of ledger.records()) out.push(record);
  return out;
}

/** What a writer did: its records in call order, and which of them it was told had landed. */
export interface Attempt {
  /** Every record whose append was called, in call order. */
  readonly attempted: readonly Record[];
  /** The indexes (into `attempted`) of the appends whose promise resolved. */
  readonly acked: ReadonlySet<number>;
}

/**
 * Promises 1 and 2 for what a reopen found: every record is one that was attempted, whole
 * (its canonical line), in call order, with no record twice; every acknowledged record is there.
 * With `prefix`, what was found must be the first records attempted (a writer that nothing
 * refused or failed: the file order is the call order). Gives the attempted index of each record
 * found.
 */
export function checkRecovered(found: readonly Record[], attempt: Attempt, context: string, prefix = false): number[] {
  const lines: (string | undefined)[] = [];
  const lineAt = (n: number): string => (lines[n] ??= encodeRecord(attempt.attempted[n] as Record));
  const matched: number[] = [];
  let next = 0;
  found.forEach((record, n) => {
    const line = encodeRecord(record);
    if (prefix) {
      assert.ok(
        n < attempt.attempted.length && lineAt(n) === line,
        `${context}: promise 2 broken: record ${n + 1} after the reopen is not the record attempted ${n + 1}st: ${line}`,
      );
      matched.push(n);
      return;
    }
    while (next < attempt.attempted.length && lineAt(next) !== line) next++;
    assert.ok(
      next < attempt.attempted.length,
      `${context}: promise 2 broken: record ${n + 1} after the reopen was never attempted (or is out of call order): ${line}`,
    );
    matched.push(next++);
  });
  const present = new Set(matched);
  for (const index of [...attempt.acked].sort((a, b) => a - b)) {
    assert.ok(
      present.has(index),
      `${context}: promise 1 broken: the acknowledged append ${index + 1} is missing after the reopen: ${index < attempt.attempted.length ? lineAt(index) : '?'}`,
    );
  }
  return matched;
}

/**
 * Promise 3 for a writable JSONL reopen that succeeded: the file was `before` (or missing); it
 * must now be exactly the lines of `found`, `before` must have been those lines followed by a
 * tail with no newline, and `repair` must say what was dropped.
 */
export function checkJsonlRepair(
  before: Buffer | null,
  after: Buffer | null,
  found: readonly Record[],
  repair: Repair | null,
  context: string,
): void {
  const lines = fileOf(found);
  if (before === null) {
    assert.is(after, null, `${context}: a missing file was created by an open`);
    assert.is(found.length, 0, `${context}: records from a missing file`);
    assert.is(repair, null, `${context}: a repair of a missing file`);
    return;
  }
  assert.ok(
    before.subarray(0, lines.length).equals(lines),
    `${context}: promise 3: the records found are not the file's first lines, byte for byte`,
  );
  const tail = before.subarray(lines.length);
  assert.is(
    tail.indexOf(10),
    -1,
    `${context}: promise 3 broken: the open dropped a complete line (${tail.length} bytes dropped, with a newline)`,
  );
  assert.ok(
    after?.equals(lines) === true,
    `${context}: promise 3: after the reopen the file is not exactly its whole lines`,
  );
  if (tail.length === 0) assert.is(repair, null, `${context}: a repair where there was no tail`);
  else assert.equal(repair, { at: lines.length, dropped: tail.length, cut: true }, `${context}: the repair reported`);
}
