/**
 * A child process for the single-writer harness (`test/crash/single-writer.test.ts`), forked
 * with an IPC channel, on the ledger argv[2] (a path or `level:<folder>`). It does what the
 * parent says, one message at a time, and answers each:
 *
 * - `open`: one writable open; `opened`, or `refused` with the error's code and message. The
 *   ledger stays open (held) until `close`.
 * - `close`: closes the held ledger; `closed`.
 * - `race` (n, marker): n writable opens one after another, as fast as it can; after each that
 *   wins, it creates `marker` with O_EXCL (which fails if the other process holds the ledger
 *   too), appends one record, waits 0-2 ms, removes the marker and closes. Answers with how many
 *   opens won and were refused, and anything that went wrong.
 */
import { closeSync, constants, openSync, unlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLedgerError, Ledger } from '../../lib/index.js';

export type Command =
  | { readonly op: 'open' }
  | { readonly op: 'close' }
  | { readonly op: 'race'; readonly attempts: number; readonly marker: string };

export type Answer =
  | { readonly op: 'opened'; readonly size: number }
  | { readonly op: 'refused'; readonly code: string; readonly message: string }
  | { readonly op: 'closed' }
  | { readonly op: 'raced'; readonly won: number; readonly refused: number; readonly problems: readonly string[] }
  | { readonly op: 'failed'; readonly message: string };

const target = process.argv[2];
if (target === undefined || process.send === undefined)
  throw new Error('usage: fork contender.js <ledger>, with an IPC channel');
const send = (answer: Answer): void => {
  process.send?.(answer);
};

let held: Ledger | null = null;
let seed = process.pid;
const random = (n: number): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 16) % n;
};

async function race(attempts: number, marker: string): Promise<Answer> {
  let won = 0;
  let refused = 0;
  const problems: string[] = [];
  for (let n = 0; n < attempts; n++) {
    let ledger: Ledger;
    try {
      ledger = await Ledger.open(target as string);
    } catch (e) {
      if (isLedgerError(e, 'LEDGER_LOCKED')) refused++;
      else problems.push(`open ${n}: ${e instanceof Error ? e.message : String(e)}`);
      await sleep(random(2));
      continue;
    }
    won++;
    try {
      // O_EXCL: if the other process holds the ledger too, its marker is there
      closeSync(openSync(marker, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY));
    } catch (e) {
      problems.push(
        `open ${n} won while the other process held the ledger: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    try {
      await ledger.append({
        type: 'decided',
        time: '2026-09-28T10:00:00.000Z',
        item: { type: 'edit', id: `race-${process.pid}`, part: n },
        action: { type: 'skip', why: 'race' },
      });
      await sleep(random(3));
    } catch (e) {
      problems.push(`append ${n}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      try {
        unlinkSync(marker);
      } catch (e) {
        problems.push(`marker ${n}: ${e instanceof Error ? e.message : String(e)}`);
      }
      await ledger.close();
    }
  }
  return { op: 'raced', won, refused, problems };
}

async function perform(command: Command): Promise<Answer> {
  switch (command.op) {
    case 'open':
      if (held !== null) return { op: 'failed', message: 'open: holding already' };
      try {
        held = await Ledger.open(target as string);
        return { op: 'opened', size: held.size };
      } catch (e) {
        if (!isLedgerError(e)) throw e;
        return { op: 'refused', code: e.code, message: e.message };
      }
    case 'close':
      await held?.close();
      held = null;
      return { op: 'closed' };
    case 'race':
      return race(command.attempts, command.marker);
  }
}

// one command at a time, in order
let queue: Promise<void> = Promise.resolve();
process.on('message', (command: Command) => {
  queue = queue.then(async () => {
    try {
      send(await perform(command));
    } catch (e) {
      send({ op: 'failed', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    }
  });
});
process.on('disconnect', () => process.exit(0));
