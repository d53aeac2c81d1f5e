/**
 * A small seeded random generator (sfc32, seeded through splitmix32): the same seed gives the same
 * numbers on every platform, with no allocation per number. The one generator of the project: for
 * synthetic data (the generated ledgers of `honcho/synthetic.ts`), the fault wrapper's random
 * faults and delays, and the tests' harnesses; never for anything secret.
 *
 * @module
 */

/** splitmix32: spreads a seed over the generator's state, so that nearby seeds differ at once. */
function splitmix32(state: number): () => number {
  let s = state | 0;
  return () => {
    s = (s + 0x9e3779b9) | 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** sfc32 (Chris Doty-Humphrey's small fast counting generator): 32-bit state words, no allocation. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** @param seed any safe integer: both halves of a 53-bit seed count, so that seeds 1 and 2^32 + 1 differ */
  constructor(seed: number) {
    const low = seed >>> 0;
    const high = Math.floor(seed / 0x1_0000_0000) >>> 0;
    const mix = splitmix32(low ^ Math.imul(high, 0x27d4eb2d));
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix() ^ high;
    for (let n = 0; n < 12; n++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform number in [0, 1). */
  next(): number {
    return this.u32() / 0x1_0000_0000;
  }

  /** A uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Whether an event of probability `p` happens. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** The numbers 0 to n - 1 in a uniformly random order (Fisher-Yates). */
  permutation(n: number): number[] {
    const order = Array.from({ length: n }, (_, k) => k);
    for (let k = n - 1; k > 0; k--) {
      const j = this.below(k + 1);
      [order[k], order[j]] = [order[j] as number, order[k] as number];
    }
    return order;
  }

  /** A uniform element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[this.below(list.length)] as T;
  }

  /**
   * An exponentially distributed number with this mean (a waiting time). V8's `Math.log` is a
   * port of fdlibm, the same on every platform, so the numbers stay the same bit for bit.
   */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}
