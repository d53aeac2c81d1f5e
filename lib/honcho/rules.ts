/**
 * The ledger's rules (spec 000, "The rules"), as pure functions of an item's state:
 * - an item has exactly one `decided` record;
 * - it has at most one `sent` or `failed` record, and only while it is **waiting**: decided, not
 *   `skip`, and neither sent nor failed yet.
 *
 * @module
 */
import type { RecordRefusedError } from '../errors.js';
import { AlreadyDecidedError, NotWaitingError } from './errors.js';
import type { Record } from './record.js';

/** Where an item stands. An item with no state has not been decided. */
export type ItemState = 'skipped' | 'waiting' | 'sent' | 'failed';

/** Whether a record of type `type` may follow an item whose state is `state`. */
export function allows(type: Record['type'], state: ItemState | undefined): boolean {
  return type === 'decided' ? state === undefined : state === 'waiting';
}

/** Why `record` may not follow an item whose state is `state`, or `null` when it may. */
export function refusal(record: Record, state: ItemState | undefined): RecordRefusedError | null {
  if (allows(record.type, state)) return null;
  return record.type === 'decided' ? new AlreadyDecidedError(record.item) : new NotWaitingError(record.item);
}

/** The item's state once `record` (which the rules allow) is taken in. */
export function stateAfter(record: Record): ItemState {
  switch (record.type) {
    case 'decided':
      return record.action.type === 'skip' ? 'skipped' : 'waiting';
    case 'sent':
      return 'sent';
    case 'failed':
      return 'failed';
  }
}
