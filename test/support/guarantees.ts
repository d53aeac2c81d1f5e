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
 * re-stated ({@link RuleModel}), lines are compared as bytes against `encodeRecord`'s canonical
 * text, and the expected outcome of opening a file is worked out from its bytes alone
 * ({@link expectedOpen}).
 */
import * as assert from 'uvu/assert';
import { type Counts, type Item, type Ledger, type Record, type Repair, encodeRecord } from '../../lib/index.js';
import { couldBeCutOff } from './reference-ledger.js';

/** A record's canonical line, with its newline. */
export const lineOf = (record: Record): string => `${encodeRecord(record)}\n`;

/** The canonical bytes of a JSONL file holding exactly `records`. */
export const fileOf = (records: readonly Record[]): Buffer => Buffer.from(records.map(lineOf).join(''), 'utf8');

/** An item as a string key (independent of the engine's `ItemMap`). */
export const itemKey = (item: Item): string => (item.type === 'turn' ? `turn\u0000${item.session}\u0000${item.turn}` : `edit\u0000${item.id}\u0000${item.part}`);

type State = 'skipped' | 'waiting' | 'sent' | 'failed';

/**
 * The ledger's rules, re-stated: an item is decided once; it gets at most one `sent` or `failed`,
 * and only while it is waiting (decided, not `skip`, no outcome yet). Keeps the counts and the
 * outbox a fresh replay gives.
 */
export class RuleModel {
  private readonly states = new Map<string, State>();
  /** Waiting items in decision order (a Set keeps insertion order). */
  private readonly waiting = new Set<string>();
  private sent = 0;
  private failed = 0;
  private skipped = 0;

  /** Why `record` breaks the rules here, or `null` when it may follow. */
  why(record: Record): string | null {
    const state = this.states.get(itemKey(record.item));
    if (record.type === 'decided') return state === undefined ? null : `item ${JSON.stringify(record.item)} decided twice`;
    if (state === undefined) return `a ${record.type} for item ${JSON.stringify(record.item)}, which was never decided`;
    if (state === 'skipped') return `a ${record.type} for item ${JSON.stringify(record.item)}, which was skipped`;
    if (state !== 'waiting') return `a second outcome (${record.type} after ${state}) for item ${JSON.stringify(record.item)}`;
    return null;
  }

  /** Takes `record` in; it must keep the rules. */
  apply(record: Record): void {
    const key = itemKey(record.item);
    if (record.type === 'decided') {
      if (record.action.type === 'skip') {
        this.states.set(key, 'skipped');
        this.skipped++;
      } else {
        this.states.set(key, 'waiting');
        this.waiting.add(key);
      }
      return;
    }
    this.waiting.delete(key);
    this.states.set(key, record.type);
    if (record.type === 'sent') this.sent++;
    else this.failed++;
  }

  isDecided(item: Item): boolean {
    return this.states.has(itemKey(item));
  }

  counts(): Counts {
    return { decided: this.states.size, sent: this.sent, waiting: this.waiting.size, failed: this.failed, skipped: this.skipped };
  }

  /** The waiting items' keys, in decision order. */
  outbox(): string[] {
    return [...this.waiting];
  }
}

/** Promise 4: `records`, in order, keep the rules. Gives the model they build. */
export function checkRules(records: readonly Record[], context: string): RuleModel {
  const model = new RuleModel();
  records.forEach((record, n) => {
    const why = model.why(record);
    assert.ok(why === null, `${context}: promise 4 broken at record ${n + 1}: ${why}`);
    model.apply(record);
  });
  return model;
}

/** The ledger answers as a fresh replay of `records` does: size, counts, outbox, decisions. */
export async function checkLedgerState(ledger: Ledger, records: readonly Record[], context: string): Promise<void> {
  const model = checkRules(records, context);
  assert.is(ledger.size, records.length, `${context}: the ledger's size`);
  assert.equal(await ledger.counts(), model.counts(), `${context}: the ledger's counts against a replay`);
  assert.equal(
    (await ledger.outbox()).map((d) => itemKey(d.item)),
    model.outbox(),
    `${context}: the ledger's outbox against a replay`,
  );
  let decided = 0;
  for await (const decision of ledger.decisions()) {
    assert.ok(model.isDecided(decision.item), `${context}: the ledger believes ${JSON.stringify(decision.item)} decided; no record says so`);
    decided++;
  }
  assert.is(decided, model.counts().decided, `${context}: the ledger's decisions`);
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
    assert.ok(next < attempt.attempted.length, `${context}: promise 2 broken: record ${n + 1} after the reopen was never attempted (or is out of call order): ${line}`);
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

/** What opening a JSONL file of these bytes must give, worked out from the bytes alone. */
export type ExpectedOpen =
  | { readonly kind: 'records'; readonly count: number; readonly whole: number; readonly dropped: number }
  | { readonly kind: 'damage'; readonly line: number; readonly whole: number };

/**
 * What an open of `bytes` must do when the file's complete lines should be the canonical lines
 * of `attempted`, in order: when every complete line is, the open succeeds with them and drops
 * whatever follows the last newline (`dropped` bytes); otherwise the first complete line that is
 * not (zeros or garbage followed by a newline) is damage at its number. A file with no complete
 * line whose bytes could not begin a record's line (garbage where the first line's start was) is
 * damage at line 1 too. `whole` is the number of leading complete lines that are the attempted
 * records. `null` bytes: a missing file.
 */
export function expectedOpen(bytes: Buffer | null, attempted: readonly Record[]): ExpectedOpen {
  if (bytes === null) return { kind: 'records', count: 0, whole: 0, dropped: 0 };
  let start = 0;
  let n = 0;
  for (let newline = bytes.indexOf(10, start); newline !== -1; newline = bytes.indexOf(10, start), n++) {
    const expected = n < attempted.length ? Buffer.from(lineOf(attempted[n] as Record), 'utf8') : null;
    if (expected === null || !bytes.subarray(start, newline + 1).equals(expected)) return { kind: 'damage', line: n + 1, whole: n };
    start = newline + 1;
  }
  // no complete line, and garbage where the first line's start was: not a line a writer cut off
  if (n === 0 && bytes.length > 0 && !couldBeCutOff(bytes)) return { kind: 'damage', line: 1, whole: 0 };
  return { kind: 'records', count: n, whole: n, dropped: bytes.length - start };
}

/**
 * Promise 3 for a writable JSONL reopen that succeeded: the file was `before` (or missing); it
 * must now be exactly the lines of `found`, `before` must have been those lines followed by a
 * tail with no newline, and `repair` must say what was dropped.
 */
export function checkJsonlRepair(before: Buffer | null, after: Buffer | null, found: readonly Record[], repair: Repair | null, context: string): void {
  const lines = fileOf(found);
  if (before === null) {
    assert.is(after, null, `${context}: a missing file was created by an open`);
    assert.is(found.length, 0, `${context}: records from a missing file`);
    assert.is(repair, null, `${context}: a repair of a missing file`);
    return;
  }
  assert.ok(before.subarray(0, lines.length).equals(lines), `${context}: promise 3: the records found are not the file's first lines, byte for byte`);
  const tail = before.subarray(lines.length);
  assert.is(tail.indexOf(10), -1, `${context}: promise 3 broken: the open dropped a complete line (${tail.length} bytes dropped, with a newline)`);
  assert.ok(after !== null && after.equals(lines), `${context}: promise 3: after the reopen the file is not exactly its whole lines`);
  if (tail.length === 0) assert.is(repair, null, `${context}: a repair where there was no tail`);
  else assert.equal(repair, { at: lines.length, dropped: tail.length, cut: true }, `${context}: the repair reported`);
}

/** mulberry32: `random(n)` is an integer in [0, n), the same sequence for the same seed on every run. */
export function mulberry32(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Splitmix32: a small seeded generator for the harnesses (deterministic from its seed). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed | 0;
  }
  u32(): number {
    this.s = (this.s + 0x9e3779b9) | 0;
    let z = this.s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }
  /** A uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor((this.u32() / 0x1_0000_0000) * n);
  }
  chance(p: number): boolean {
    return this.u32() / 0x1_0000_0000 < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[this.below(list.length)] as T;
  }
}

/** The base seed of the crash harnesses: `LEDGERSTORE_CRASH_SEED` to replay a run, else fixed. */
export const BASE_SEED = (() => {
  const raw = process.env.LEDGERSTORE_CRASH_SEED;
  if (raw === undefined) return 5;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`LEDGERSTORE_CRASH_SEED must be an integer, not ${JSON.stringify(raw)}`);
  return seed;
})();
