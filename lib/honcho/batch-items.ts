/**
 * The items of a batch as the ledger forms it (`ledger.ts`): for each record, which earlier
 * record of the batch, if any, is of the same item, so that the rules check it against the
 * state with that record applied. The items of a batch are nearly always all different, so each
 * is found by a hash of a few of its fields, in tables kept from one batch to the next, and
 * compared whole only where the hashes meet: nothing is made per record or per batch (a map of
 * items made a map a batch, and one more for each session in it, about 100 bytes a record).
 *
 * @module
 */
import { type Item, sameItem } from './record.js';

/** The records a batch holds before the tables grow (the ledger's batches hold at most 1,024). */
const FIRST_CAPACITY = 1024;

/** The items of one batch at a time, each with a number: {@link BatchItems.add} each, {@link BatchItems.clear} after. */
export class BatchItems {
  /** Per hash slot, 1 + the index of the latest item added whose hash falls there; 0 for none. A power of two long, at most a quarter full. */
  private slots = new Int32Array(4 * FIRST_CAPACITY);
  /** Per index: 1 + the index of the item added before it in the same slot; 0 for none. */
  private previous = new Int32Array(FIRST_CAPACITY);
  /** Per index: its slot, to empty the slots again. */
  private slotOf = new Int32Array(FIRST_CAPACITY);
  /** Per index: its item. */
  private readonly items: Item[] = [];
  /** Per index: the number it was added with. */
  private values = new Int32Array(FIRST_CAPACITY);
  private count = 0;

  /** The number the latest item added that is `item` was added with, or -1 when none was. */
  latest(item: Item): number {
    for (let at = (this.slots[this.slotFor(item)] as number) - 1; at >= 0; at = (this.previous[at] as number) - 1)
      if (sameItem(this.items[at] as Item, item)) return this.values[at] as number;
    return -1;
  }

  /** Adds `item`, with `value` (a whole number from 0 to 2^31-1: the ledger's, its place in the queue). */
  add(item: Item, value: number): void {
    const at = this.count;
    if (at === this.previous.length) this.grow();
    const slot = this.slotFor(item);
    this.previous[at] = this.slots[slot] as number;
    this.slots[slot] = at + 1;
    this.slotOf[at] = slot;
    this.items[at] = item;
    this.values[at] = value;
    this.count = at + 1;
  }

  /** Forgets every item added, for the next batch (and lets go of them). */
  clear(): void {
    const { slots, slotOf, items } = this;
    for (let at = 0; at < this.count; at++) {
      slots[slotOf[at] as number] = 0;
      items[at] = undefined as unknown as Item;
    }
    this.count = 0;
  }

  /** The slot of `item`'s hash: of its number and the length, ends and middle of its string. */
  private slotFor(item: Item): number {
    let text: string;
    let hash: number;
    if (item.type === 'turn') {
      text = item.session;
      // a turn past 2^53-1 is a bigint: those are rare, and share a hash
      hash = typeof item.turn === 'number' ? item.turn | 0 : 0x5bd1e995;
    } else {
      text = item.id;
      hash = (item.part | 0) ^ 0x27d4eb2f;
    }
    const length = text.length;
    // charCodeAt past the end is NaN, which `| 0` makes 0 (an empty id)
    hash ^=
      Math.imul(length, 0x01000193) ^ (text.charCodeAt(length - 1) | 0) ^ ((text.charCodeAt(length >> 1) | 0) << 11);
    hash = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d);
    hash = Math.imul(hash ^ (hash >>> 12), 0x297a2d39);
    return (hash ^ (hash >>> 15)) & (this.slots.length - 1);
  }

  /** Twice the room, the items added so far hashed again into the larger slots. */
  private grow(): void {
    const capacity = 2 * this.previous.length;
    const values = this.values;
    this.previous = new Int32Array(capacity);
    this.slotOf = new Int32Array(capacity);
    this.values = new Int32Array(capacity);
    this.slots = new Int32Array(4 * capacity);
    const count = this.count;
    this.count = 0;
    for (let at = 0; at < count; at++) this.add(this.items[at] as Item, values[at] as number);
  }
}
