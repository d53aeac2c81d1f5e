/**
 * What a ledger answers, gathered for comparing two ways of reading the same log.
 */
import type { Item, Ledger } from '../../lib/index.js';

/** The answers a ledger gives: its counts and outbox, the state and sent ids of some of `items`, the conclusions of the outbox's texts. */
export async function answers(ledger: Ledger, items: readonly Item[]): Promise<unknown> {
  const states = [];
  // every item of a small ledger, a few hundred spread over a large one (each `sentIds` reads the log)
  const every = Math.ceil(items.length / 300);
  for (let n = 0; n < items.length; n += every) {
    const item = items[n] as Item;
    states.push([await ledger.stateOf(item), await ledger.sentIds(item)]);
  }
  const outbox = await ledger.outbox();
  const conclusions = [];
  for (const { action } of outbox) {
    if (action.type === 'conclude' || action.type === 'unconclude')
      conclusions.push(await ledger.conclusion(action.workspace, action.text));
  }
  return { counts: await ledger.counts(), outbox, states, conclusions };
}
