/**
 * A map keyed by items. Looking an item up happens for every record replayed and appended, so it
 * builds no key string: turns are found by session, then by turn number; an edit's key is short.
 *
 * @module
 */
import type { Item, Turn } from './record.js';

export class ItemMap<V> {
  /** session -> turn -> value: a session has many turns, so one inner map serves many (a turn in its one form, {@link Turn}). */
  private readonly turns = new Map<string, Map<Turn, V>>();
  /** `<part>:<id>` -> value: edits have few parts each, and a map per edit would cost more. */
  private readonly edits = new Map<string, V>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(item: Item): V | undefined {
    return item.type === 'turn'
      ? this.turns.get(item.session)?.get(item.turn)
      : this.edits.get(`${item.part}:${item.id}`);
  }

  has(item: Item): boolean {
    return this.get(item) !== undefined;
  }

  /** Sets the item's value (never `undefined`). */
  set(item: Item, value: V): void {
    if (item.type === 'turn') {
      let turns = this.turns.get(item.session);
      if (turns === undefined) this.turns.set(item.session, (turns = new Map()));
      if (!turns.has(item.turn)) this.count++;
      turns.set(item.turn, value);
    } else {
      const key = `${item.part}:${item.id}`;
      if (!this.edits.has(key)) this.count++;
      this.edits.set(key, value);
    }
  }
}
