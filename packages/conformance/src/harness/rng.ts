/**
 * A small seeded PRNG (sfc32) for bulk test data. fast-check draws the seeds, so a case is still
 * replayed exactly from `{ seed, path }`, while tensors of thousands of elements are filled
 * without fast-check generating (and shrinking) every element.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    this.a = 0x9e3779b9;
    this.b = seed | 0;
    this.c = (stream * 0x85ebca6b) | 0;
    this.d = 1;
    for (let i = 0; i < 15; i++) this.u32();
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

  /** A uniform double in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** A uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** true with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** A random permutation of 0..n-1. */
  permutation(n: number): number[] {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [p[i], p[j]] = [p[j], p[i]];
    }
    return p;
  }
}
