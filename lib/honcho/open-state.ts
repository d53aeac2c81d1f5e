/**
 * The state a Honcho ledger (`ledger.ts`) opens with, and its log: the in-memory projection,
 * rebuilt by the log's read-through, or, with a read model (`index`) or projections of the
 * caller's, the state that the read model's rows answer (`read-model/state.ts`).
 *
 * @module
 */
import type { EventLog, LogBackend } from '../log.js';
import type { LedgerOptions } from './options.js';
import { Projection } from './projection.js';
import { IndexedState } from './read-model/state.js';
import type { Record } from './record.js';
import { type LedgerState, MemoryState } from './state.js';

/** Where notices go when the caller names no `onNotice`: nowhere, as a library prints nothing. */
const dropNotice = (_message: string): void => undefined;

/** Opens `backend`'s log, reading it into the state `options` ask for (checked already). */
export async function openState(
  backend: LogBackend<Record>,
  options: LedgerOptions,
): Promise<{ readonly log: EventLog<Record>; readonly state: LedgerState }> {
  const readOnly = options.readOnly ?? false;
  if (options.index === undefined && (options.projections ?? []).length === 0) {
    const projection = new Projection();
    const log = await backend.open({
      readOnly,
      replay: (record) => projection.replay(record),
      replayLine: (line) => projection.replayLine(line),
      sizeHint: (bytes, first) => projection.reserve((bytes * first.records) / first.bytes),
    });
    return { log, state: new MemoryState(projection, log) };
  }
  return IndexedState.open(backend, {
    index: options.index ?? null,
    projections: options.projections ?? [],
    readOnly,
    onNotice: options.onNotice ?? dropNotice,
    waitForIndex: options.waitForIndex ?? false,
    worker: options.worker,
    backgroundFrom: options.backgroundFrom,
  });
}
