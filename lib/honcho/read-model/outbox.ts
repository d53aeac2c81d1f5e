/**
 * The projection of the outbox: the waiting items in decision order, which memoryd's worker reads
 * a page at a time. Only waiting items have rows, so that a page reads only them.
 *
 * | key | value |
 * |---|---|
 * | `o<seq>` | a waiting item and its action, `[item, action]`, by its decision's number (12 hex digits) |
 * | `w<item key>` | a waiting item's decision number, to find its `o` row when it is sent or failed |
 * | `n` | the next decision's number |
 *
 * An item decided and sent within one batch (most of them, in a build) costs no write at all,
 * and no change of the rows either.
 *
 * @module
 */
import type { ProjectionDefinition } from '../../projections/definition.js';
import type { Decision } from '../projection.js';
import type { Action, Item, Record } from '../record.js';
import type { OutboxCursor, OutboxPage } from '../state.js';
import { keysOf, seqText } from './items.js';

/** What the outbox projection answers. */
export interface OutboxQueries {
  /** Every waiting item with its action, in decision order. */
  outbox(): Promise<Decision[]>;
  /** Up to `limit` waiting items, oldest first, after `after` (from the start when absent). */
  outboxPage(limit: number, after?: OutboxCursor): Promise<OutboxPage>;
}

/**
 * The outbox projection (`outbox()`, `outboxPage()`): the waiting items in decision order, a row
 * each, so that a page reads only waiting items. Part of the Honcho read model.
 */
export const outboxProjection: ProjectionDefinition<Record, OutboxQueries> = {
  name: 'outbox',
  version: 1,
  worker: { module: import.meta.url, export: 'outboxProjection' },

  reads: (records) => ['n', ...keysOf(records).awaited.map((key) => `w${key}`)],

  apply(records, rows) {
    let next = rows.get<number>('n') ?? 0;
    const from = next;
    // the items decided in this batch and still waiting, in decision order: one sent or failed
    // within it (most, in a build) never becomes a row
    const waiting = new Map<string, readonly [seq: number, item: Item, action: Action]>();
    const keys = keysOf(records).all;
    for (let n = 0; n < records.length; n++) {
      const record = records[n] as Record;
      const key = keys[n] as string;
      if (record.type === 'decided') {
        const seq = next++;
        if (record.action.type !== 'skip') waiting.set(key, [seq, record.item, record.action]);
        continue;
      }
      if (waiting.delete(key)) continue;
      const seq = rows.get<number>(`w${key}`);
      if (seq === undefined) continue; // not waiting: the items projection refuses the record
      rows.del(`w${key}`);
      rows.del(`o${seqText(seq)}`);
    }
    for (const [key, [seq, item, action]] of waiting) {
      rows.insert(`o${seqText(seq)}`, [item, action]);
      rows.insert(`w${key}`, seq);
    }
    if (next !== from) rows.put('n', next);
  },

  queries: (rows) => ({
    async outbox() {
      const out: Decision[] = [];
      for await (const [, [item, action]] of rows.range<[Item, Action]>({ prefix: 'o' })) out.push({ item, action });
      return out;
    },
    async outboxPage(limit, after) {
      const decisions: Decision[] = [];
      let last: number | null = null;
      const range = { prefix: 'o', ...(after === undefined ? {} : { gt: `o${seqText(after)}` }), limit: limit + 1 };
      for await (const [key, [item, action]] of rows.range<[Item, Action]>(range)) {
        if (decisions.length === limit) return { decisions, next: last };
        decisions.push({ item, action });
        last = Number.parseInt(key.slice(1), 16);
      }
      return { decisions, next: null };
    },
  }),
};
