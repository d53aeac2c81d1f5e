/**
 * The read model's two caches: the item rows seen last, and a Bloom filter of the items a build
 * wrote, so that a catch-up seldom asks LevelDB.
 *
 * @module
 */
import type { Row } from './layout.js';

/**
 * The rows seen last, at least `size / 2` and at most `size` of them: two generations, the
 * younger replacing the older when it is full. (Evicting a Map's oldest entry one at a time
 * makes V8 skip ever more deleted entries to find it.)
 */
export class RowCache {
  private young = new Map<string, Row>();
  private old = new Map<string, Row>();
  constructor(private readonly size: number) {}

  get(key: string): Row | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: string, row: Row): void {
    if (this.young.size >= this.size / 2) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, row);
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}

/**
 * A Bloom filter of strings: `has` is never wrong when it says no, and says yes of a string it
 * was not given about 2% of the time with 5 million strings in it (2^26 bits, 8 MiB, 3 hashes).
 */
export class BloomFilter {
  private static readonly BITS = 1 << 26;
  private readonly bits = new Uint8Array(BloomFilter.BITS / 8);

  add(key: string): void {
    const [h1, h2] = hashes(key);
    for (let k = 0; k < 3; k++) {
      const bit = (h1 + k * h2) & (BloomFilter.BITS - 1);
      this.bits[bit >>> 3] = (this.bits[bit >>> 3] as number) | (1 << (bit & 7));
    }
  }

  has(key: string): boolean {
    const [h1, h2] = hashes(key);
    for (let k = 0; k < 3; k++) {
      const bit = (h1 + k * h2) & (BloomFilter.BITS - 1);
      if (((this.bits[bit >>> 3] as number) & (1 << (bit & 7))) === 0) return false;
    }
    return true;
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
