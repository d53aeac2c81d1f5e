/**
 * Test support: record builders (as memoryd's `tests/support/ledger.rs` has them, from the
 * conformance suite), `Home`, a fresh temporary directory with a ledger path in it, removed by
 * `remove()`, and the checks of what a promise settles with.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { isLedgerError, type LedgerErrorCode } from '../../lib/index.js';

export { all } from '../conformance/common.js';
// The record builders are the conformance suite's (which ships without this folder).
export {
  conclude,
  decided,
  edit,
  failed,
  fleet,
  retract,
  sent,
  skip,
  TIME,
  turn,
  turnTo,
  unconclude,
} from '../conformance/records.js';

/** A fresh temporary directory holding (maybe) a ledger at `path`. */
export class Home {
  readonly dir: string;
  readonly path: string;
  constructor(name = 'honcho.jsonl') {
    this.dir = mkdtempSync(join(tmpdir(), 'ledgerstore-test-'));
    this.path = join(this.dir, name);
  }
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs `body` with a fresh `Home`, removed afterwards whatever happens. */
export async function withHome<T>(body: (home: Home) => Promise<T> | T): Promise<T> {
  const home = new Home();
  try {
    return await body(home);
  } finally {
    home.remove();
  }
}

/** Every item of an async iterable, in order. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  return assert.unreachable('resolved; expected it to fail') as never;
}

/**
 * Awaits `promise` and expects it to reject with a ledger error of `code` (and `message`,
 * exactly or as a pattern); gives the error.
 */
export async function rejects(
  promise: Promise<unknown>,
  code: LedgerErrorCode,
  message?: string | RegExp,
): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    assert.ok(isLedgerError(e, code), `expected ${code}, got ${String(e)}`);
    if (typeof message === 'string') assert.is((e as Error).message, message);
    else if (message !== undefined) assert.match((e as Error).message, message);
    return e as Error;
  }
  return assert.unreachable(`accepted; expected ${code}`) as never;
}
