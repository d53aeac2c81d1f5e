/**
 * Test support: record builders (as memoryd's `tests/support/ledger.rs` has them) and `Home`, a
 * fresh temporary directory with a ledger path in it, removed by `remove()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type Action, type EventLog, type Item, type LedgerErrorCode, type Record, type Workspace, isLedgerError } from '../../lib/index.js';

export const TIME = '2026-09-28T10:00:00.000Z';

export const turn = (session: string, n: number): Item => ({ type: 'turn', session, turn: n });
export const edit = (id: string, part: number): Item => ({ type: 'edit', id, part });

export const turnTo = (workspace: Workspace = 'trusted', speaker = 'kyle'): Action => ({ type: 'turn', workspace, speaker });
export const conclude = (workspace: Workspace, text: string, peer = 'kyle', session = 'chat-1'): Action => ({
  type: 'conclude',
  workspace,
  peer,
  session,
  text,
});
export const unconclude = (workspace: Workspace, text: string): Action => ({ type: 'unconclude', workspace, text });
export const fleet = (text: string, session = 'chat-1'): Action => ({ type: 'fleet', session, text });
export const retract = (text: string, session = 'chat-1'): Action => ({ type: 'retract', session, text });
export const skip = (why = 'nothing to send'): Action => ({ type: 'skip', why });

export const decided = (item: Item, action: Action = turnTo(), time = TIME): Record => ({ type: 'decided', time, item, action });
export const sent = (item: Item, ids: readonly string[] = ['msg-1'], time = TIME): Record => ({ type: 'sent', time, item, ids });
export const failed = (item: Item, status: number | null = null, kind = 'refused', time = TIME): Record => ({
  type: 'failed',
  time,
  item,
  status,
  kind,
});

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

/** Every record of `log`, from `from`. */
export const all = <R>(log: EventLog<R>, from?: number): Promise<R[]> => collect(log.read(from));

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
export async function rejects(promise: Promise<unknown>, code: LedgerErrorCode, message?: string | RegExp): Promise<Error> {
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
