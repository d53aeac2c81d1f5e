/**
 * The ledger's state in memory, rebuilt by replaying its records in order: what memoryd queries
 * (spec 000, "What each public function gives"). Only records the rules allow are applied; the
 * caller ({@link Ledger}) checks them first.
 *
 * @module
 */

import { ItemMap } from './item-map.js';
import type { Action, Counts, Item, Record, Workspace } from './record.js';
import { type ItemState, stateAfter } from './rules.js';

interface Entry {
  /** Its place in decision order, from 0. */
  readonly seq: number;
  readonly item: Item;
  readonly action: Action;
  state: ItemState;
  ids: readonly string[] | null;
}

/** An item and what was decided for it. */
export interface Decision {
  readonly item: Item;
  readonly action: Action;
}

/** The conclusion to delete for an undo: the `Conclude` item and the id Honcho gave it. */
export interface Conclusion {
  readonly item: Item;
  readonly id: string;
}

function stackKey(workspace: Workspace, text: string): string {
  return `${workspace}\n${text}`;
}

/** The state of every item, indexed for the queries. */
export class Projection {
  private readonly entries = new ItemMap<Entry>();
  /** Every decided item, in the order of its `decided` record. */
  private readonly order: Entry[] = [];
  /** The waiting items; a Set keeps insertion order, which is decision order. */
  private readonly waiting = new Set<Entry>();
  /** Per (workspace, text), the sent conclusions not undone yet, the latest last. */
  private readonly stacks = new Map<string, Conclusion[]>();
  private sent = 0;
  private failed = 0;
  private skipped = 0;

  /** The item's state; `undefined` when it is not decided. */
  stateOf(item: Item): ItemState | undefined {
    return this.entries.get(item)?.state;
  }

  /** Takes in a record that the rules allow. */
  apply(record: Record): void {
    const state = stateAfter(record);
    if (record.type === 'decided') {
      const entry: Entry = { seq: this.order.length, item: record.item, action: record.action, state, ids: null };
      this.entries.set(record.item, entry);
      this.order.push(entry);
      if (state === 'waiting') this.waiting.add(entry);
      else this.skipped++;
      return;
    }
    const entry = this.entries.get(record.item) as Entry;
    this.waiting.delete(entry);
    entry.state = state;
    if (record.type === 'failed') {
      this.failed++;
      return;
    }
    this.sent++;
    entry.ids = record.ids;
    this.conclusionSent(entry, record.ids);
  }

  /** A sent `Conclude` goes on its stack; a sent `Unconclude` takes the top one off. */
  private conclusionSent(entry: Entry, ids: readonly string[]): void {
    const { action } = entry;
    if (action.type === 'conclude') {
      const id = ids[0];
      if (id === undefined) return;
      const key = stackKey(action.workspace, action.text);
      const stack = this.stacks.get(key);
      if (stack === undefined) this.stacks.set(key, [{ item: entry.item, id }]);
      else stack.push({ item: entry.item, id });
    } else if (action.type === 'unconclude') {
      const key = stackKey(action.workspace, action.text);
      const stack = this.stacks.get(key);
      stack?.pop();
      if (stack?.length === 0) this.stacks.delete(key);
    }
  }

  /** Whether the item has its `decided` record (a `skip` counts). */
  isDecided(item: Item): boolean {
    return this.entries.has(item);
  }

  /** Every waiting item with its action, in the order of the `decided` records. */
  outbox(): Decision[] {
    const out: Decision[] = [];
    for (const { item, action } of this.waiting) out.push({ item, action });
    return out;
  }

  /** Up to `limit` waiting items, in decision order, after the one at `after` in decision order. */
  outboxPage(limit: number, after = -1): { decisions: Decision[]; next: number | null } {
    const decisions: Decision[] = [];
    let last = -1;
    for (const { seq, item, action } of this.waiting) {
      if (seq <= after) continue;
      if (decisions.length === limit) return { decisions, next: last };
      decisions.push({ item, action });
      last = seq;
    }
    return { decisions, next: null };
  }

  /** The ids of the item's `sent` record, or `null` when it has none. */
  sentIds(item: Item): readonly string[] | null {
    return this.entries.get(item)?.ids ?? null;
  }

  /** The latest sent conclusion of this workspace and text that is not undone, or `null`. */
  conclusion(workspace: Workspace, text: string): Conclusion | null {
    const stack = this.stacks.get(stackKey(workspace, text));
    return stack === undefined ? null : (stack[stack.length - 1] ?? null);
  }

  counts(): Counts {
    const waiting = this.waiting.size;
    return {
      decided: this.order.length,
      sent: this.sent,
      waiting,
      failed: this.failed,
      skipped: this.skipped,
    };
  }

  /** Every decided item with its action, in decision order. */
  *decisions(): IterableIterator<Decision> {
    for (const { item, action } of this.order) yield { item, action };
  }
}
