/**
 * A projection a user of the Honcho ledger adds, for the projection tests: the turns decided per
 * session. Its `gated` twin holds a build in a worker thread until the file that
 * `LEDGERSTORE_TEST_GATE` names exists, so that a test can look at (or kill) a build while it
 * runs, at no moment left to chance; its `exiting` version 2 ends the build's thread at its first batch.
 */
import { existsSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import type { ProjectionDefinition, Record } from '../../lib/index.js';

/** What it answers. */
export interface TurnQueries {
  /** How many turns of `session` were decided. */
  turnsOf(session: string): Promise<number>;
}

const apply: ProjectionDefinition<Record, TurnQueries>['apply'] = (records, rows) => {
  for (const record of records) {
    if (record.type !== 'decided' || record.item.type !== 'turn') continue;
    const key = `s${record.item.session}`;
    rows.put(key, (rows.get<number>(key) ?? 0) + 1);
  }
};

const queries: ProjectionDefinition<Record, TurnQueries>['queries'] = (rows) => ({
  turnsOf: async (session) => (await rows.get<number>(`s${session}`)) ?? 0,
});

export const turnsPerSession: ProjectionDefinition<Record, TurnQueries> = {
  name: 'turns',
  version: 1,
  worker: { module: import.meta.url, export: 'turnsPerSession' },
  apply,
  queries,
};

/** Sleeps the worker thread until the gate exists (never the thread that serves). */
function waitForGate(): void {
  const gate = process.env['LEDGERSTORE_TEST_GATE'];
  if (isMainThread || gate === undefined) return;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(gate)) Atomics.wait(nap, 0, 0, 20);
}

export const gatedTurns: ProjectionDefinition<Record, TurnQueries> = {
  ...turnsPerSession,
  worker: { module: import.meta.url, export: 'gatedTurns' },
  apply(records, rows, first) {
    waitForGate();
    apply(records, rows, first);
  },
};

/** Version 2 of the turns projection (the same rows), for a soak that bumps it. */
export const turnsVersion2: ProjectionDefinition<Record, TurnQueries> = {
  ...turnsPerSession,
  version: 2,
  worker: { module: import.meta.url, export: 'turnsVersion2' },
};

/** Version 2 of the turns projection whose build ends its worker thread, with code 3, at its first batch (the thread that serves applies it as version 1). */
export const exitingTurns: ProjectionDefinition<Record, TurnQueries> = {
  ...turnsPerSession,
  version: 2,
  worker: { module: import.meta.url, export: 'exitingTurns' },
  apply(records, rows, first) {
    if (!isMainThread) process.exit(3);
    apply(records, rows, first);
  },
};
