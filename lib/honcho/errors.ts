/**
 * The errors of the Honcho ledger's rules (`rules.ts`): a record refused for what it says, on
 * `append` (nothing is written) or, met while a log is read through, as damage at its line. The
 * texts are memoryd's, word for word.
 *
 * @module
 */
import { RecordRefusedError } from '../errors.js';
import type { Item } from './record.js';

/** How the rule errors name an item: `turn 3 of session chat-1`, `part 0 of edit 2026-09-28-0001`. */
function itemName(item: Item): string {
  return item.type === 'turn' ? `turn ${item.turn} of session ${item.session}` : `part ${item.part} of edit ${item.id}`;
}

/** A second `decided` record for an item. */
export class AlreadyDecidedError extends RecordRefusedError {
  readonly code = 'LEDGER_ALREADY_DECIDED';
  constructor(readonly item: Item) {
    super(`${itemName(item)}: decided already`);
  }
}

/** A `sent` or `failed` record for an item that is not waiting (undecided, skipped, or done). */
export class NotWaitingError extends RecordRefusedError {
  readonly code = 'LEDGER_NOT_WAITING';
  constructor(readonly item: Item) {
    super(`${itemName(item)}: not waiting to be sent`);
  }
}
