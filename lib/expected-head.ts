/**
 * Expected-head concurrency: a writer that read the log up to some head says so when it appends,
 * and the append is refused if another writer got there first. A small pure function, so that
 * every backend decides a conflict the same way.
 */
import { ConflictError } from './errors.js';
import type { Position } from './log.js';

/** Whether an append that expects `expected` may go ahead on a log whose head is `actual`. */
export function headMatches(expected: Position | undefined, actual: Position): boolean {
  return expected === undefined || expected === actual;
}

/**
 * Throws the {@link ConflictError} for `name` when an append expecting `expected` finds the log's
 * head at `actual`.
 */
export function assertExpectedHead(name: string, expected: Position | undefined, actual: Position): void {
  if (!headMatches(expected, actual)) throw new ConflictError(name, expected as Position, actual);
}
