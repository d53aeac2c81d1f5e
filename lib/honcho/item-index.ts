/**
 * The decided items of a state, each by its place in decision order (its `seq`, from 0), kept in
 * typed arrays rather than as objects: an item is a kind, a name (a session id or an edit id, as
 * a number from {@link Names}) and a number (the turn or the part), found again by an
 * open-addressing table of seqs. A turn above 2^53-1 (a bigint: a float64 cannot hold it) is kept
 * in a side table, its number there the negative -1 - its place, which no turn or part is. About 20 bytes an item, where a map of item objects takes ten
 * times that and gives the garbage collector as much more to walk.
 *
 * Names are found by their UTF-8 bytes, so that a line read through can be taken in without its
 * strings being made (`projection.ts`); an item given as an object is found the same way, its
 * name written into a scratch buffer.
 *
 * @module
 */
import type { Item, Turn } from './record.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Keeps a name's leading U+FEFF: a name is text, not a document whose byte order mark is dropped. */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** `array` with room for `length` elements at least: itself, or a copy twice as long or more. */
export function withRoom<A extends Int32Array | Uint8Array | Float64Array>(array: A, length: number): A {
  if (length <= array.length) return array;
  const larger = new (array.constructor as new (length: number) => A)(Math.max(length, array.length * 2));
  larger.set(array);
  return larger;
}

/**
 * The length of an open-addressing table that holds `entries` at most half full: a power of two,
 * `least` at least.
 */
function tableLength(entries: number, least: number): number {
  let length = least;
  while (length < 2 * entries) length *= 2;
  return length;
}

/**
 * A hash of `bytes[start, start + length)`, as an int32 (the empty name's too): FNV-1a's step
 * over four bytes at a time, then murmur3's finalizer, which mixes the words' bits that the
 * step alone leaves apart.
 */
function hashBytes(bytes: Uint8Array, start: number, length: number): number {
  let h = 0x811c_9dc5 ^ length;
  const end = start + length;
  let k = start;
  for (; k + 4 <= end; k += 4) {
    const word =
      (bytes[k] as number) |
      ((bytes[k + 1] as number) << 8) |
      ((bytes[k + 2] as number) << 16) |
      ((bytes[k + 3] as number) << 24);
    h = Math.imul(h ^ word, 0x0100_0193);
  }
  for (; k < end; k++) h = Math.imul(h ^ (bytes[k] as number), 0x0100_0193);
  h = Math.imul(h ^ (h >>> 16), 0x85eb_ca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2_ae35);
  return h ^ (h >>> 16);
}

/**
 * Strings as numbers, found by their UTF-8 bytes: each name once, only its bytes kept. Its text is
 * made again from them when asked for (a query's item, rarely): a string kept per name would be a
 * million objects on the heap of a large ledger, for the garbage collector to walk at every
 * major collection.
 *
 * A slot holds a name's hash beside its number, so that a probe compares hashes within the
 * table's own cache lines, and a name's start and length lie side by side: in a table of a
 * million names, larger than the caches, each array a probe reads is a miss to memory.
 */
export class Names {
  /** Per slot, two entries: the hash, and the number + 1 (0: empty); a power of two slots, at most half full. */
  private slots = new Int32Array(2 << 10);
  /** Per number, two entries: where its bytes start in {@link Names.bytes}, and how many. */
  private spans = new Int32Array(2 << 9);
  private bytes = new Uint8Array(1 << 14);
  private used = 0;
  private count = 0;
  private scratch = Buffer.allocUnsafe(256);
  /** The free slot the last name not found would take, and its hash. */
  private missedSlot = -1;
  private missedHash = 0;

  get size(): number {
    return this.count;
  }

  /** The number of the name whose bytes are `bytes[start, start + length)`, or -1 (then {@link Names.addBytes} of it looks for nothing again). */
  findBytes(bytes: Uint8Array, start: number, length: number): number {
    const hash = hashBytes(bytes, start, length);
    const { slots, spans } = this;
    const mask = (slots.length >>> 1) - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const taken = slots[2 * slot + 1] as number;
      if (taken === 0) {
        this.missedSlot = slot;
        this.missedHash = hash;
        return -1;
      }
      const number = taken - 1;
      if (
        slots[2 * slot] === hash &&
        spans[2 * number + 1] === length &&
        this.same(spans[2 * number] as number, bytes, start, length)
      )
        return number;
    }
  }

  private same(at: number, bytes: Uint8Array, start: number, length: number): boolean {
    const kept = this.bytes;
    for (let k = 0; k < length; k++) if (kept[at + k] !== bytes[start + k]) return false;
    return true;
  }

  /**
   * Gives the name whose bytes are `bytes[start, start + length)` (well-formed UTF-8) and which
   * {@link Names.findBytes} just did not find a number.
   */
  addBytes(bytes: Uint8Array, start: number, length: number): number {
    const number = this.count++;
    this.spans = withRoom(this.spans, 2 * number + 2);
    this.bytes = withRoom(this.bytes, this.used + length);
    this.bytes.set(bytes.subarray(start, start + length), this.used);
    this.spans[2 * number] = this.used;
    this.spans[2 * number + 1] = length;
    this.used += length;
    this.slots[2 * this.missedSlot] = this.missedHash;
    this.slots[2 * this.missedSlot + 1] = number + 1;
    if (2 * this.count > this.slots.length >>> 1) this.rehash(this.slots.length);
    return number;
  }

  /** The number of `name`, or -1 when it has none yet. */
  find(name: string): number {
    // a string UTF-8 cannot hold is no record's name (and would be written as another's bytes)
    if (!name.isWellFormed()) return -1;
    const length = this.encode(name);
    return this.findBytes(this.scratch, 0, length);
  }

  /** The number of `name` (a record's: well formed), given one if it had none. */
  add(name: string): number {
    const length = this.encode(name);
    const found = this.findBytes(this.scratch, 0, length);
    return found >= 0 ? found : this.addBytes(this.scratch, 0, length);
  }

  /** The name numbered `number`, as a fresh string. */
  text(number: number): string {
    const start = this.spans[2 * number] as number;
    return utf8.decode(this.bytes.subarray(start, start + (this.spans[2 * number + 1] as number)));
  }

  /** Writes `name`'s UTF-8 into the scratch buffer; its length. */
  private encode(name: string): number {
    if (3 * name.length > this.scratch.length) this.scratch = Buffer.allocUnsafe(3 * name.length);
    return this.scratch.write(name, 0, 'utf8');
  }

  /** Moves every name into a table of `slots` slots. */
  private rehash(slots: number): void {
    const old = this.slots;
    const table = new Int32Array(2 * slots);
    const mask = slots - 1;
    for (let from = 0; from < old.length; from += 2) {
      if (old[from + 1] === 0) continue;
      const hash = old[from] as number;
      let slot = hash & mask;
      while (table[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      table[2 * slot] = hash;
      table[2 * slot + 1] = old[from + 1] as number;
    }
    this.slots = table;
  }
}

/** Mixes a kind, a name and a number into a hash (murmur3's finalizer over both halves). */
function hashOf(edit: boolean, name: number, number: number): number {
  let h = Math.imul(name ^ (edit ? 0x5bd1_e995 : 0), 0x9e37_79b1);
  h ^= number >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85eb_ca6b);
  h ^= (number / 0x1_0000_0000) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2_ae35);
  return h ^ (h >>> 16);
}

/** Items whose numbers differ only in their last bits start their probes side by side (see {@link firstSlot}). */
const GROUP_BITS = 4;
const GROUP_MASK = (1 << GROUP_BITS) - 1;

/**
 * Where the probe for an item starts: its group's place (the hash of its kind, name and number
 * without its last {@link GROUP_BITS} bits), then its place within the group. A session's turns
 * and an edit's parts come close together in a log, so neighbours share a cache line of the table:
 * in a table of tens of millions of slots, far larger than the caches, a random slot per item was
 * a miss to memory for nearly every line replayed.
 */
function firstSlot(edit: boolean, name: number, number: number, mask: number): number {
  // exact: a division by a power of two, of a whole number below 2^53 (or a negative big-turn place)
  const group = Math.floor(number / (GROUP_MASK + 1));
  return ((hashOf(edit, name, group) & ~GROUP_MASK) | (number & GROUP_MASK)) & mask;
}

/** The items of a state, by seq. */
export class ItemIndex {
  readonly names = new Names();
  /** Seq + 1 in each slot (0: empty); a power of two long, at most half full. */
  private slots = new Int32Array(1 << 10);
  private kinds = new Uint8Array(1 << 9);
  private nameOf = new Int32Array(1 << 9);
  private numberOf = new Float64Array(1 << 9);
  private count = 0;
  /** The turns above 2^53-1, each once, and each one's place among them. */
  private readonly bigTurns: bigint[] = [];
  private readonly bigTurnPlaces = new Map<bigint, number>();
  /** The free slot the last item not found would take (-1 when its name has no number yet). */
  private missedSlot = -1;

  /** How many items there are. */
  get size(): number {
    return this.count;
  }

  /** The seq of `item`, or -1 when it has none. */
  find(item: Item): number {
    const edit = item.type === 'edit';
    const name = this.names.find(edit ? item.id : item.session);
    if (name < 0) return -1;
    const number = edit ? item.part : typeof item.turn === 'number' ? item.turn : this.bigTurnNumber(item.turn, false);
    return Number.isNaN(number) ? -1 : this.findKey(edit, name, number);
  }

  /**
   * The number a turn given as a bigint is kept as: itself when a float64 holds it exactly (a
   * caller's small turn), else its place in the side table, given one with `add`; NaN when it
   * has none.
   */
  private bigTurnNumber(turn: bigint, add: boolean): number {
    if (turn <= MAX_SAFE) return Number(turn);
    let place = this.bigTurnPlaces.get(turn);
    if (place === undefined) {
      if (!add) return Number.NaN;
      place = this.bigTurns.length;
      this.bigTurns.push(turn);
      this.bigTurnPlaces.set(turn, place);
    }
    return -1 - place;
  }

  /**
   * The seq of the item of this kind, name (a number of {@link ItemIndex.names}) and number, or
   * -1 (then {@link ItemIndex.addKey} of it looks for nothing again).
   */
  findKey(edit: boolean, name: number, number: number): number {
    const { slots, nameOf, numberOf, kinds } = this;
    const mask = slots.length - 1;
    const kind = edit ? 1 : 0;
    for (let slot = firstSlot(edit, name, number, mask); ; slot = (slot + 1) & mask) {
      const taken = slots[slot] as number;
      if (taken === 0) {
        this.missedSlot = slot;
        return -1;
      }
      const seq = taken - 1;
      if (nameOf[seq] === name && numberOf[seq] === number && kinds[seq] === kind) return seq;
    }
  }

  /** Gives `item`, which has no seq, the next one, and returns it. */
  add(item: Item): number {
    const edit = item.type === 'edit';
    const name = this.names.add(edit ? item.id : item.session);
    const number = edit ? item.part : typeof item.turn === 'number' ? item.turn : this.bigTurnNumber(item.turn, true);
    this.findKey(edit, name, number);
    return this.addKey(edit, name, number);
  }

  /**
   * Makes room for `items` items in all, so that adding up to that many neither grows an array
   * nor rehashes the table: a replay that knows about how many items its log holds takes the
   * room once rather than doubling its way there. An estimate, not a cap: an index holds more
   * than it made room for, growing as it would have. Answers are the same either way. Not
   * between a {@link ItemIndex.findKey} that missed and its {@link ItemIndex.addKey}.
   */
  reserve(items: number): void {
    const length = tableLength(items, this.slots.length);
    if (length > this.slots.length) this.rehash(length);
    this.kinds = withRoom(this.kinds, items);
    this.nameOf = withRoom(this.nameOf, items);
    this.numberOf = withRoom(this.numberOf, items);
  }

  /** Gives the item {@link ItemIndex.findKey} just did not find the next seq, and returns it. */
  addKey(edit: boolean, name: number, number: number): number {
    const seq = this.count++;
    this.kinds = withRoom(this.kinds, seq + 1);
    this.nameOf = withRoom(this.nameOf, seq + 1);
    this.numberOf = withRoom(this.numberOf, seq + 1);
    this.kinds[seq] = edit ? 1 : 0;
    this.nameOf[seq] = name;
    this.numberOf[seq] = number;
    if (2 * this.count > this.slots.length) this.rehash(this.slots.length * 2);
    else this.slots[this.missedSlot] = seq + 1;
    return seq;
  }

  /** The item at `seq`, as a fresh object. */
  item(seq: number): Item {
    const name = this.names.text(this.nameOf[seq] as number);
    const number = this.numberOf[seq] as number;
    if (this.kinds[seq] === 1) return { type: 'edit', id: name, part: number };
    const turn: Turn = number >= 0 ? number : (this.bigTurns[-1 - number] as bigint);
    return { type: 'turn', session: name, turn };
  }

  private rehash(length: number): void {
    const slots = new Int32Array(length);
    const mask = length - 1;
    for (let seq = 0; seq < this.count; seq++) {
      let slot = firstSlot(this.kinds[seq] === 1, this.nameOf[seq] as number, this.numberOf[seq] as number, mask);
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = seq + 1;
    }
    this.slots = slots;
  }
}
