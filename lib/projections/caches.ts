/**
 * A generation's two caches: the rows seen last, and a filter of the keys a generation built in
 * this process has written, so that a build or an append seldom asks LevelDB.
 *
 * @module
 */

/**
 * The values seen last, at least `size / 2` and at most `size` of them (or the last large
 * batches taken in whole, see {@link RowCache.absorb}): two generations, the younger replacing
 * the older when it is full. (Evicting a Map's oldest entry one at a time
 * makes V8 skip ever more deleted entries to find it.)
 */
export class RowCache<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  constructor(private readonly size: number) {}

  get(key: string): V | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: string, value: V): void {
    if (this.young.size >= this.size / 2) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  /**
   * Takes in `rows` (a written batch's, which the cache may change from now on): a large batch becomes the younger
   * generation whole rather than being copied a row at a time, which for a build's batches of a
   * few hundred thousand rows cost as much as staging them.
   */
  absorb(rows: Map<string, V>): void {
    if (rows.size < this.size / 4) {
      for (const [key, value] of rows) this.set(key, value);
      return;
    }
    this.old = this.young;
    this.young = rows;
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}

/** How many times larger each filter of a {@link KeyFilter} is than the one before. */
const GROWTH = 8;
/** Bits a key in each filter, and bits set a key: about 0.25% false positives in a full filter. */
const BITS_A_KEY = 16;
const PROBES = 4;

/**
 * A Bloom filter of strings that grows with them: `has` is never wrong when it says no, and says
 * yes of a string it was not given about 1% of the time. A filter of 16 bits a string (4 hashes)
 * is added, eight times as large as the last, whenever the last holds as many as it was made for,
 * so that a small projection costs a few KiB and 5 million keys about 37 MiB. A key it was not
 * given is looked for in every filter and each one's false positives add up: filters twice as
 * large, of 12 bits a key, were ten at 5 million keys and said yes of 9% of the keys never added,
 * each then a read of LevelDB.
 */
export class KeyFilter {
  private readonly filters: Uint8Array[] = [];
  private bits = 0;
  private held = 0;

  constructor(private readonly firstBits = 1 << 16) {
    this.grow();
  }

  /** How many filters it holds. */
  get count(): number {
    return this.filters.length;
  }

  private grow(): void {
    this.bits = this.filters.length === 0 ? this.firstBits : this.bits * GROWTH;
    this.filters.push(new Uint8Array(this.bits / 8));
    this.held = 0;
  }

  /** Adds `key`. */
  add(key: string): void {
    const [h1, h2] = hashes(key);
    this.addHashed(h1, h2);
  }

  has(key: string): boolean {
    const [h1, h2] = hashes(key);
    return this.hasHashed(h1, h2);
  }

  private addHashed(h1: number, h2: number): void {
    if (this.held >= this.bits / BITS_A_KEY) this.grow();
    this.held++;
    const filter = this.filters[this.filters.length - 1] as Uint8Array;
    const mask = this.bits - 1;
    for (let k = 0; k < PROBES; k++) {
      const bit = (h1 + k * h2) & mask;
      filter[bit >>> 3] = (filter[bit >>> 3] as number) | (1 << (bit & 7));
    }
  }

  private hasHashed(h1: number, h2: number): boolean {
    // the largest first: it holds most of the keys
    for (let n = this.filters.length - 1; n >= 0; n--) {
      const filter = this.filters[n] as Uint8Array;
      const mask = filter.length * 8 - 1;
      let all = true;
      for (let k = 0; k < PROBES && all; k++) {
        const bit = (h1 + k * h2) & mask;
        all = ((filter[bit >>> 3] as number) & (1 << (bit & 7))) !== 0;
      }
      if (all) return true;
    }
    return false;
  }
}

/** Two 32-bit FNV-1a hashes of `key`'s UTF-16 code units, with different offsets, for double hashing. */
export function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let n = 0; n < key.length; n++) {
    const c = key.charCodeAt(n);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return [a >>> 0, (b >>> 0) | 1];
}
